export { freePort } from './free-port';
export { HOSTILE_URLS } from './hostile-urls';
export { ManualClock } from './manual-clock';
export { createTestDatabase, type TestDatabase } from './test-database';
export { testAdminUrl } from './test-env';
export { WebhookReceiver, type Answer, type Answerer, type ReceivedWebhook } from './webhook-receiver';
