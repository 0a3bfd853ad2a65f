export { WebhookAttempt } from './webhook-attempt.entity';
export { WebhookDelivery, type DeliveryStatus } from './webhook-delivery.entity';
export { WebhookEndpoint } from './webhook-endpoint.entity';
export { SESSION_EVENT_TYPES, WebhookEvent, type OpsEventType, type SessionEventType, type WebhookEventType } from './webhook-event.entity';

import { WebhookAttempt } from './webhook-attempt.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookEvent } from './webhook-event.entity';

/** The notifications module's tables, for the broker's ENTITIES list. */
export const NOTIFICATION_ENTITIES = [WebhookEvent, WebhookDelivery, WebhookAttempt, WebhookEndpoint];
