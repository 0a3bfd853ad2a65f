/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com), for the broker that signs and for the
 * customers who verify. Dependency-free on purpose (node:crypto only); libs/sdk ships its own copy, tested against the same vectors.
 *
 * Signed content is `${webhook-id}.${webhook-timestamp}.${body}`; `webhook-signature` is a space-separated
 * list of `v1,<base64 HMAC-SHA256>`, one per secret that currently signs (two for 24 h after a rotation).
 * A secret `whsec_<base64>` keys the HMAC with its decoded bytes; any other string with its UTF-8 bytes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const DEFAULT_TOLERANCE_SEC = 300;

/** The webhook body: `{ id, type, timestamp, data }`. */
export interface WebhookPayload<T = Record<string, unknown>> {
  id: string;
  type: string;
  timestamp: string;
  data: T;
}

export type WebhookHeaders = Record<string, string | string[] | undefined> | { get(name: string): string | null };

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from `now`, either way (default 300 s). */
  toleranceSec?: number;
  /** The time to check against, epoch milliseconds (default: now). */
  now?: number;
}

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** A new secret, `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

const keys = new Map<string, Buffer>();

function secretKey(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    key = secret.startsWith(WEBHOOK_SECRET_PREFIX)
      ? Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64')
      : Buffer.from(secret, 'utf8');
    // Decoded once per secret: the broker signs every attempt with the same few.
    if (keys.size >= 1000) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

function toBuffer(body: string | Uint8Array): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** One `v1,<base64>` signature of the message. */
export function signatureFor(secret: string, id: string, timestampSec: number | string, body: string | Uint8Array): string {
  const hmac = createHmac('sha256', secretKey(secret));
  hmac.update(`${id}.${timestampSec}.`);
  hmac.update(toBuffer(body));
  return `v1,${hmac.digest('base64')}`;
}

/** The three Standard Webhooks headers for a message, signed with every given secret. */
export function signWebhook(
  secrets: readonly string[],
  id: string,
  timestampSec: number,
  body: string | Uint8Array,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': secrets.map((secret) => signatureFor(secret, id, timestampSec, body)).join(' '),
  };
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a received webhook: its signature under any of `secrets` (pass both while rotating) and its
 * timestamp within the tolerance. Returns the parsed body; throws WebhookVerificationError otherwise.
 * Pass the body exactly as received (the raw bytes), not re-serialised JSON.
 */
export function verifyWebhook<T = Record<string, unknown>>(
  secrets: string | readonly string[],
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): WebhookPayload<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  const tolerance = options.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const nowSec = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSec - Number(timestamp)) > tolerance) throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');

  const given = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  const candidates = typeof secrets === 'string' ? [secrets] : secrets;
  const matches = candidates.some((secret) => {
    const expected = Buffer.from(signatureFor(secret, id, timestamp, rawBody).slice(3), 'base64');
    return given.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected));
  });
  if (!matches) throw new WebhookVerificationError('no webhook-signature matches');
  try {
    return JSON.parse(toBuffer(rawBody).toString('utf8')) as WebhookPayload<T>;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}
