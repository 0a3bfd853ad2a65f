import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { WebhooksController } from './api/webhooks.controller';
import { WebhookHistory } from './api/webhook-history';
import { WebhookHistoryRepository } from './api/webhook-history.repository';
import { WebhookSecretsAdminController } from './api/webhook-secrets-admin.controller';
import { DeliveryStore } from './delivery/delivery-store';
import { DeliveryWorkerService } from './delivery/delivery-worker.service';
import { DeliveryWaker } from './events/delivery-wakes';
import { EventOutbox } from './events/event-outbox';
import { WebhookSecretRepository } from '../accounts/webhook-secrets/webhook-secret.repository';
import { WebhookSecrets } from '../accounts/webhook-secrets/webhook-secrets';
import { CallbackUrlValidator } from './targets/callback-url-validator';
import { DefaultCallbackUrlRepository } from './targets/default-callback-url.repository';
import { DefaultCallbackUrls } from './targets/default-callback-urls';

/**
 * Outbound notifications (docs/design.md#outbox-and-webhook-delivery): session events recorded in the caller's transaction (`EventOutbox`),
 * delivered as signed Standard Webhooks by a worker that every replica runs, with the retry,
 * endpoint-down, breaker and SSRF rules. See docs/webhooks.md.
 */
@Module({
  controllers: [WebhooksController, WebhookSecretsAdminController],
  providers: [
    {
      provide: EventOutbox,
      useFactory: (clock: Clock, config: BrokerConfig) => new EventOutbox(clock, config.notifications),
      inject: [CLOCK, BROKER_CONFIG],
    },
    {
      provide: WebhookSecrets,
      useFactory: (dataSource: DataSource, config: BrokerConfig, clock: Clock) =>
        new WebhookSecrets(new WebhookSecretRepository(dataSource), config.notifications.secretOverlapMs, clock),
      inject: [DataSource, BROKER_CONFIG, CLOCK],
    },
    { provide: DeliveryStore, useFactory: (dataSource: DataSource) => new DeliveryStore(dataSource), inject: [DataSource] },
    { provide: DeliveryWaker, useFactory: (dataSource: DataSource) => new DeliveryWaker(dataSource), inject: [DataSource] },
    CallbackUrlValidator,
    WebhookHistory,
    WebhookHistoryRepository,
    DefaultCallbackUrls,
    DefaultCallbackUrlRepository,
    DeliveryWorkerService,
  ],
  exports: [EventOutbox, DeliveryWaker, CallbackUrlValidator, WebhookSecrets],
})
export class NotificationsModule {}
