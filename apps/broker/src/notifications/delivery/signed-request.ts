import { signWebhook } from '@app/sdk';
import type { WebhookSecrets } from '../secrets/webhook-secrets';
import type { ClaimedDelivery } from './delivery-store';
import type { DeliveryPreparer } from './endpoint-lane';

/** A webhook's body: what customers read with the SDK's `constructEvent`. */
interface WebhookBody {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The body a delivery carries: the same bytes on every attempt. */
export function webhookBody(delivery: Pick<ClaimedDelivery, 'eventId' | 'type' | 'eventCreatedAt' | 'data'>): string {
  const payload: WebhookBody = {
    id: delivery.eventId,
    type: delivery.type,
    timestamp: delivery.eventCreatedAt.toISOString(),
    data: delivery.data,
  };
  return JSON.stringify(payload);
}

/**
 * Signs at send time: `webhook-id` is the delivery id (stable across retries), `webhook-timestamp` the
 * attempt's time, and one `v1` signature per secret that signs now. Ops deliveries are signed with
 * OPS_WEBHOOK_SECRET when it is set.
 */
export class SignedRequestPreparer implements DeliveryPreparer {
  constructor(
    private readonly secrets: WebhookSecrets,
    private readonly opsSecret: string | undefined,
  ) {}

  async prepare(delivery: ClaimedDelivery, now: number): Promise<{ body: string; headers: Record<string, string> }> {
    const body = webhookBody(delivery);
    const secrets =
      delivery.kind === 'ops' || delivery.accountId === null
        ? this.opsSecret
          ? [this.opsSecret]
          : []
        : await this.secrets.signingSecrets(delivery.accountId);
    const timestamp = Math.floor(now / 1000);
    const headers = { 'webhook-id': delivery.id, 'webhook-timestamp': String(timestamp) };
    if (secrets.length === 0) return { body, headers };
    return {
      body,
      headers: { ...headers, 'webhook-signature': signWebhook({ id: delivery.id, timestamp, payload: body, secret: secrets }) },
    };
  }
}
