import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { WebhooksController } from './api/webhooks.controller';
import { WebhookHistory } from './api/webhook-history';
import { WebhookHistoryRepository } from './api/webhook-history.repository';
import { WebhookSecretsAdminController } from './api/webhook-secrets-admin.controller';
import { NOTIFICATIONS_CLOCK, systemClock, type Clock } from './clock';
import { DeliveryWorkerService } from './delivery/delivery-worker.service';
import { EventOutbox } from './events/event-outbox';
import { WebhookSecrets } from './secrets/webhook-secrets';
import { CallbackUrlValidator } from './targets/callback-url-validator';
import { DefaultCallbackUrlRepository } from './targets/default-callback-url.repository';
import { DefaultCallbackUrls } from './targets/default-callback-urls';

/**
 * Outbound notifications (SPEC §5): session events recorded in the caller's transaction (`EventOutbox`),
 * delivered as signed Standard Webhooks by a worker that every replica runs, with the reference retry,
 * endpoint-down, breaker and SSRF rules. See docs/webhooks.md.
 */
@Module({
  controllers: [WebhooksController, WebhookSecretsAdminController],
  providers: [
    { provide: NOTIFICATIONS_CLOCK, useValue: systemClock },
    {
      provide: EventOutbox,
      useFactory: (clock: Clock, config: BrokerConfig) => new EventOutbox(clock, config.notifications),
      inject: [NOTIFICATIONS_CLOCK, BROKER_CONFIG],
    },
    {
      provide: WebhookSecrets,
      useFactory: (dataSource: DataSource, config: BrokerConfig, clock: Clock) =>
        new WebhookSecrets(dataSource, config.notifications.secretOverlapMs, clock),
      inject: [DataSource, BROKER_CONFIG, NOTIFICATIONS_CLOCK],
    },
    CallbackUrlValidator,
    WebhookHistory,
    WebhookHistoryRepository,
    DefaultCallbackUrls,
    DefaultCallbackUrlRepository,
    DeliveryWorkerService,
  ],
  exports: [EventOutbox, CallbackUrlValidator, WebhookSecrets],
})
export class NotificationsModule {}
