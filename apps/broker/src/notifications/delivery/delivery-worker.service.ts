import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { ListenClient } from '../../database/listen-client';
import { BrokerMetrics } from '../../metrics/broker-metrics';
import { workerSettings } from '../notification-settings';
import { WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import { DeliveryStore } from './delivery-store';
import { DeliveryWorker, type WorkerLogger } from './delivery-worker';
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

/** What a delivery worker is built from: the broker's notification settings and the parts the app provides. */
export interface DeliveryWorkerParts {
  store: DeliveryStore;
  notifications: BrokerConfig['notifications'];
  clock: Clock;
  secrets: WebhookSecrets;
  listener: ListenClient;
  logger: WorkerLogger;
  /** Counts the attempts under way (`broker_webhook_deliveries_in_flight`); unset: not counted. */
  inFlight?: BrokerMetrics['webhookDeliveriesInFlight'];
}

/**
 * A delivery worker and its sender, built as the app builds its own (DeliveryWorkerService), not started. The
 * caller starts the worker, and stops it before closing the sender.
 */
export function createDeliveryWorker(parts: DeliveryWorkerParts): { worker: DeliveryWorker; sender: WebhookSender } {
  const n = parts.notifications;
  const settings: SenderSettings = {
    connectTimeoutMs: n.connectTimeoutMs,
    attemptTimeoutMs: n.attemptTimeoutMs,
    allowPrivateTargets: n.allowPrivateTargets,
    minPort: n.minPort,
  };
  const sender = parts.inFlight ? new CountedWebhookSender(settings, parts.inFlight) : new WebhookSender(settings);
  const worker = new DeliveryWorker({
    store: parts.store,
    sender,
    preparer: new SignedRequestPreparer(parts.secrets, n.opsWebhookSecret),
    clock: parts.clock,
    settings: workerSettings(n),
    logger: parts.logger,
    listener: parts.listener,
  });
  return { worker, sender };
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
    const logger = new Logger('Webhooks');
    const built = createDeliveryWorker({
      store,
      notifications: config.notifications,
      clock,
      secrets,
      listener,
      logger: { log: (m) => logger.log(m), warn: (m) => logger.warn(m) },
      inFlight: metrics.webhookDeliveriesInFlight,
    });
    this.worker = built.worker;
    this.sender = built.sender;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
    await this.sender.close();
  }
}
