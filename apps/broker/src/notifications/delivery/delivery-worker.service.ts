import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { ListenClient } from '../../database/listen-client';
import { workerSettings } from '../notification-settings';
import { WebhookSecrets } from '../secrets/webhook-secrets';
import { DeliveryStore } from './delivery-store';
import { DeliveryWorker } from './delivery-worker';
import { SignedRequestPreparer } from './signed-request';
import { WebhookSender } from './webhook-sender';

/** Runs this replica's delivery worker from app start to app close (attempts in flight are aborted, not lost). */
@Injectable()
export class DeliveryWorkerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly worker: DeliveryWorker;
  private readonly sender: WebhookSender;

  constructor(
    store: DeliveryStore,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(CLOCK) clock: Clock,
    @Inject(WebhookSecrets) secrets: WebhookSecrets,
    listener: ListenClient,
  ) {
    const n = config.notifications;
    this.sender = new WebhookSender({
      connectTimeoutMs: n.connectTimeoutMs,
      attemptTimeoutMs: n.attemptTimeoutMs,
      allowPrivateTargets: n.allowPrivateTargets,
      minPort: n.minPort,
    });
    const logger = new Logger('Webhooks');
    this.worker = new DeliveryWorker({
      store,
      sender: this.sender,
      preparer: new SignedRequestPreparer(secrets, n.opsWebhookSecret),
      clock,
      settings: workerSettings(n),
      logger: { log: (m) => logger.log(m), warn: (m) => logger.warn(m) },
      listener,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
    await this.sender.close();
  }
}
