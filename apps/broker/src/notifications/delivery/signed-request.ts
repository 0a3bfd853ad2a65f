import twilio from 'twilio';
import { signWebhook } from '@app/sdk';
import { TWILIO_CALLBACK_EVENT_TYPE } from '../events/event-outbox';
import type { WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
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
 * The byte length of `webhookBody` for an event whose data serialises to `dataJson`, without serialising the data
 * again: JSON.stringify writes a member's value as it would alone, so the body is its envelope with `{}` for data,
 * `{}` replaced by `dataJson`.
 */
export function webhookBodyBytes(delivery: Pick<ClaimedDelivery, 'eventId' | 'type' | 'eventCreatedAt'>, dataJson: string): number {
  return Buffer.byteLength(webhookBody({ ...delivery, data: {} })) - 2 + Buffer.byteLength(dataJson);
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
    if (delivery.type === TWILIO_CALLBACK_EVENT_TYPE && delivery.accountId !== null) return this.twilioForm(delivery, delivery.accountId);
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

  /**
   * A Twilio-format callback: its form parameters, with `X-Twilio-Signature` (Twilio's HMAC-SHA1 over the full URL
   * and the sorted parameters, made by the `twilio` package itself) keyed with the account's current webhook secret,
   * so `twilio.validateRequest(secret, signature, url, params)` verifies it; the delivery id as Twilio's
   * `I-Twilio-Idempotency-Token`, the same on every retry.
   */
  private async twilioForm(delivery: ClaimedDelivery, accountId: string): Promise<{ body: string; headers: Record<string, string> }> {
    const { url, params } = delivery.data as { url: string; params: Record<string, string> };
    const [secret] = await this.secrets.signingSecrets(accountId);
    return twilioSignedForm(url, params, secret, delivery.id);
  }
}

/**
 * Form parameters as Twilio posts them: `X-Twilio-Signature` (HMAC-SHA1 over the full URL and the sorted
 * parameters, by the `twilio` package itself) keyed with `secret`, and `I-Twilio-Idempotency-Token`.
 */
export function twilioSignedForm(
  url: string,
  params: Record<string, string>,
  secret: string | undefined,
  idempotencyToken: string,
): { body: string; headers: Record<string, string> } {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'i-twilio-idempotency-token': idempotencyToken,
  };
  if (secret) headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature(secret, url, params);
  return { body: new URLSearchParams(params).toString(), headers };
}
