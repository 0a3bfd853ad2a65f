/**
 * Webhook signatures of the simulated provider: hex HMAC-SHA256 over
 * `${timestamp}.${provider}.${METHOD} ${path}.${rawBody}`, with the timestamp in unix seconds, so a
 * signature is valid for one provider's one route only (a body signed for `primary`'s status route
 * is refused on `failover`, or on `primary`'s inbound SMS route). Headers: `x-sim-timestamp:
 * 1752581735` and `x-sim-signature: v1=<hex>` (several space-separated `v1=` values are accepted,
 * for rotation).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookVerification } from '../provider';

export const SIM_SIGNATURE_HEADER = 'x-sim-signature';
export const SIM_TIMESTAMP_HEADER = 'x-sim-timestamp';
/** How far a webhook's timestamp may be from our clock, either way. */
export const SIM_SIGNATURE_TOLERANCE_SEC = 300;

/** What a signature is bound to besides the body: the provider and the route it was sent to. */
export interface SimWebhookTarget {
  provider: string;
  method: string;
  /** The path the webhook is posted to, e.g. `/v1/providers/primary/inbound/sms` (no query). */
  path: string;
}

export function signSimWebhook(
  secret: string,
  target: SimWebhookTarget,
  rawBody: string | Buffer,
  timestampSec: number,
): Record<string, string> {
  return {
    [SIM_TIMESTAMP_HEADER]: String(timestampSec),
    [SIM_SIGNATURE_HEADER]: `v1=${digest(secret, target, timestampSec, rawBody).toString('hex')}`,
  };
}

export interface SimSignatureCheck {
  secret: string;
  target: SimWebhookTarget;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  nowMs: number;
  toleranceSec?: number;
}

export function verifySimSignature({
  secret,
  target,
  headers,
  rawBody,
  nowMs,
  toleranceSec = SIM_SIGNATURE_TOLERANCE_SEC,
}: SimSignatureCheck): WebhookVerification {
  const timestamp = header(headers, SIM_TIMESTAMP_HEADER);
  const signatures = header(headers, SIM_SIGNATURE_HEADER);
  if (!timestamp && !signatures) return 'missing';
  if (!timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return 'invalid';
  if (!Buffer.isBuffer(rawBody)) return 'invalid';
  const timestampSec = Number(timestamp);
  if (Math.abs(nowMs / 1000 - timestampSec) > toleranceSec) return 'invalid';
  const expected = digest(secret, target, timestampSec, rawBody);
  let valid = false;
  for (const candidate of signatures.split(' ')) {
    const match = /^v1=([0-9a-f]{64})$/.exec(candidate);
    // Every candidate is compared, so the time taken does not say which one matched.
    if (match && timingSafeEqual(Buffer.from(match[1], 'hex'), expected)) valid = true;
  }
  return valid ? 'valid' : 'invalid';
}

function digest(secret: string, target: SimWebhookTarget, timestampSec: number, rawBody: string | Buffer): Buffer {
  return createHmac('sha256', secret)
    .update(`${timestampSec}.${target.provider}.${target.method.toUpperCase()} ${target.path}.`)
    .update(rawBody)
    .digest();
}

/** Node lowercases header names; a framework that does not still finds its header. */
function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}
