export { NotificationsModule } from './notifications.module';
export { AccountSessions } from './api/account-sessions';
export {
  EventOutbox,
  MAX_WEBHOOK_BODY_BYTES,
  TWILIO_CALLBACK_EVENT_TYPE,
  type FollowingTransaction,
  type SessionEventFollower,
  type TwilioCallbackInput,
  WebhookBodyTooLargeError,
  type OpsEventInput,
  type Queryable,
  type RecordedEvent,
  type SessionEventInput,
} from './events/event-outbox';
export { DeliveryWaker, DeliveryWakes, transactionThenWake, type WakeWarning } from './events/delivery-wakes';
export { CallbackUrlValidator } from './targets/callback-url-validator';
export { WebhookSender, type AttemptResult, type SenderSettings } from './delivery/webhook-sender';
export { twilioSignedForm } from './delivery/signed-request';
export { DeliveryStore } from './delivery/delivery-store';
export { createDeliveryWorker, DeliveryWorkerService, type DeliveryWorkerParts } from './delivery/delivery-worker.service';
export type { DeliveryWorker } from './delivery/delivery-worker';
export { WebhookSecrets } from '../accounts/webhook-secrets/webhook-secrets';
export { MAX_CALLBACK_URL_LENGTH, callbackUrlProblem } from './targets/target-policy';
export { NOTIFICATION_ENTITIES, SESSION_EVENT_TYPES, type SessionEventType } from './entities';
