import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { ListenClient } from '../../database/listen-client';
import { BrokerMetrics } from '../../metrics/broker-metrics';
import { workerSettings } from '../notification-settings';
import { WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import { DeliveryStore } from './delivery-store';
import { DeliveryWorker } from './delivery-worker';
import { SignedRequestPreparer } from './signed-request';
import { WebhookSender, type AttemptResult, type SenderSettings, type WebhookRequest } from './webhook-sender';

/** The sender, counting the attempts under way in `broker_webhook_deliveries_in_flight`. */
class CountedWebhookSender extends WebhookSender {
  constructor(
    settings: SenderSettings,
    private readonly inFlight: BrokerMetrics['webhookDeliveriesInFlight'],
  ) {
    super(settings);
  }

  override async send(req: WebhookRequest): Promise<AttemptResult> {
    this.inFlight.inc();
    try {
      return await super.send(req);
    } finally {
      this.inFlight.dec();
    }
  }
}

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
    metrics: BrokerMetrics,
  ) {
    const n = config.notifications;
    this.sender = new CountedWebhookSender(
      {
        connectTimeoutMs: n.connectTimeoutMs,
        attemptTimeoutMs: n.attemptTimeoutMs,
        allowPrivateTargets: n.allowPrivateTargets,
        minPort: n.minPort,
      },
      metrics.webhookDeliveriesInFlight,
    );
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
