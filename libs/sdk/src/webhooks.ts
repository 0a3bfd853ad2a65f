/**
 * Verifies the broker's outbound notifications, signed as Standard Webhooks: headers `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>` of
 * `${id}.${timestamp}.${body}`, several space-separated while a secret is being rotated).
 * A secret `whsec_<base64>` (as the broker issues them) keys the HMAC with its decoded bytes; any
 * other string with its UTF-8 bytes, as the broker's own signer does; a Uint8Array is the raw key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './types';

export type WebhookSecret = string | Uint8Array;

/** Fetch `Headers`, or Node's `req.headers` (lower-case names). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  /** The raw request body, exactly as received: not a re-serialised object. */
  payload: string | Uint8Array;
  headers: WebhookHeaders;
  /** Several secrets while rotating: a signature by any of them is accepted. */
  secret: WebhookSecret | WebhookSecret[];
  /** How far the timestamp may be from now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** The clock, for tests: Unix ms or a Date. Default now. */
  now?: number | Date;
}

export interface VerifiedWebhook<T = unknown> {
  /** Stable across retries of one delivery: use it to drop duplicates. */
  id: string;
  timestamp: Date;
  /** The body parsed as JSON. */
  body: T;
}

export type WebhookVerificationFailure =
  'missing_headers' | 'invalid_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'no_matching_signature' | 'invalid_body';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

const DEFAULT_TOLERANCE_SECONDS = 300;

/** Throws WebhookVerificationError unless the request was signed by one of the secrets, recently. */
export function verifyWebhook<T = unknown>(input: VerifyWebhookInput): VerifiedWebhook<T> {
  const id = header(input.headers, 'webhook-id');
  const timestampText = header(input.headers, 'webhook-timestamp');
  const signatures = header(input.headers, 'webhook-signature');
  if (!id || !timestampText || !signatures) {
    throw new WebhookVerificationError('missing_headers', 'The webhook-id, webhook-timestamp and webhook-signature headers are required.');
  }
  if (!/^\d{1,15}$/.test(timestampText)) throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not Unix seconds.');
  const timestamp = Number(timestampText);
  const nowSeconds = Math.floor(toMillis(input.now) / 1000);
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (timestamp < nowSeconds - tolerance) throw new WebhookVerificationError('timestamp_too_old', 'The webhook timestamp is too old.');
  if (timestamp > nowSeconds + tolerance)
    throw new WebhookVerificationError('timestamp_too_new', 'The webhook timestamp is in the future.');

  const payload = typeof input.payload === 'string' ? Buffer.from(input.payload, 'utf8') : Buffer.from(input.payload);
  const given = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  const secrets = Array.isArray(input.secret) ? input.secret : [input.secret];
  const matched = secrets.some((secret) => {
    const expected = hmac(secret, id, timestampText, payload);
    return given.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected));
  });
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'No webhook-signature matches the secret.');

  try {
    return { id, timestamp: new Date(timestamp * 1000), body: JSON.parse(payload.toString('utf8')) as T };
  } catch {
    throw new WebhookVerificationError('invalid_body', 'The webhook body is not JSON.');
  }
}

export interface ConstructEventOptions {
  /** How far the timestamp may be from now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** The clock, for tests: Unix ms or a Date. Default now. */
  now?: number | Date;
}

/**
 * Verifies a webhook the broker sent and returns its event, typed by `type`: narrow on it to read `data`.
 * Pass the raw body exactly as received, the request's headers (`req.headers` or a fetch `Headers`), and
 * your secret (several while rotating). Throws WebhookVerificationError when the signature, the timestamp
 * or the body's shape is wrong. `event.id` is the same on every retry of the event: drop duplicates by it.
 */
export function constructEvent(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: WebhookSecret | WebhookSecret[],
  options: ConstructEventOptions = {},
): WebhookEvent {
  const { body } = verifyWebhook<unknown>({ payload, headers, secret, ...options });
  if (!isEventBody(body))
    throw new WebhookVerificationError('invalid_body', 'The webhook body is not a broker event (id, type, timestamp, data).');
  return body;
}

function isEventBody(body: unknown): body is WebhookEvent {
  if (typeof body !== 'object' || body === null) return false;
  const event = body as Record<string, unknown>;
  return (
    typeof event.id === 'string' &&
    typeof event.type === 'string' &&
    typeof event.timestamp === 'string' &&
    typeof event.data === 'object' &&
    event.data !== null
  );
}

export interface SignWebhookInput {
  id: string;
  /** Unix seconds, or a Date. */
  timestamp: number | Date;
  payload: string | Uint8Array;
  secret: WebhookSecret;
}

/** The `webhook-signature` value for one secret: for testing your own webhook handler. */
export function signWebhook(input: SignWebhookInput): string {
  const seconds = input.timestamp instanceof Date ? Math.floor(input.timestamp.getTime() / 1000) : input.timestamp;
  const payload = typeof input.payload === 'string' ? Buffer.from(input.payload, 'utf8') : Buffer.from(input.payload);
  return `v1,${hmac(input.secret, input.id, String(seconds), payload).toString('base64')}`;
}

function hmac(secret: WebhookSecret, id: string, timestamp: string, payload: Buffer): Buffer {
  return createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.`).update(payload).digest();
}

function secretKey(secret: WebhookSecret): Buffer {
  if (typeof secret !== 'string') return Buffer.from(secret);
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}

function toMillis(now: number | Date | undefined): number {
  if (now === undefined) return Date.now();
  return now instanceof Date ? now.getTime() : now;
}
