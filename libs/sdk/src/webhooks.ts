/**
 * Standard Webhooks (https://www.standardwebhooks.com), the one implementation: the broker signs its
 * outbound notifications with `signWebhook`/`newWebhookSecret` from here, and customers verify them with
 * `verifyWebhook`/`constructEvent` from here, so the broker's tests exercise the code customers run.
 * Dependency-free on purpose (`node:crypto` only): the SDK is published without runtime dependencies.
 *
 * Headers `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>`
 * of `${id}.${timestamp}.${body}`, several space-separated while a secret is being rotated).
 * A secret `whsec_<base64>` (as the broker issues them) keys the HMAC with its decoded bytes; any
 * other string with its UTF-8 bytes; a Uint8Array is the raw key.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { InterceptRequest, WebhookEvent } from './types';

export type WebhookSecret = string | Uint8Array;

/** Fetch `Headers`, or Node's `req.headers` (lower-case names). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  /** The raw request body, exactly as received: not a re-serialised object. */
  payload: string | Uint8Array;
  headers: WebhookHeaders;
  /** Several secrets while rotating: a signature by any of them is accepted. */
  secret: WebhookSecret | readonly WebhookSecret[];
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

const SECRET_PREFIX = 'whsec_';
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

  const given = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  const matched = secretList(input.secret).some((secret) => {
    const expected = hmac(secret, id, timestampText, input.payload);
    return given.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected));
  });
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'No webhook-signature matches the secret.');

  try {
    return { id, timestamp: new Date(timestamp * 1000), body: JSON.parse(text(input.payload)) as T };
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
  secret: WebhookSecret | readonly WebhookSecret[],
  options: ConstructEventOptions = {},
): WebhookEvent {
  const { body } = verifyWebhook<unknown>({ payload, headers, secret, ...options });
  if (!isEventBody(body))
    throw new WebhookVerificationError('invalid_body', 'The webhook body is not a broker event (id, type, timestamp, data).');
  return body;
}

/**
 * Verifies an intercept request (`interaction.intercept`, POSTed to your intercept URL before a relay or a
 * bridge) and returns it typed. Answer 2xx to let the interaction through, 403 to block it. Throws
 * WebhookVerificationError when the signature, the timestamp or the body is wrong.
 */
export function constructInterceptRequest(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: WebhookSecret | readonly WebhookSecret[],
  options: ConstructEventOptions = {},
): InterceptRequest {
  const { body } = verifyWebhook<unknown>({ payload, headers, secret, ...options });
  if (!isEventBody(body) || (body as { type: string }).type !== 'interaction.intercept')
    throw new WebhookVerificationError('invalid_body', 'The body is not an interaction.intercept request.');
  return body as unknown as InterceptRequest;
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
  /** Several while rotating: one `v1,` signature each, in this order. */
  secret: WebhookSecret | readonly WebhookSecret[];
}

/**
 * The `webhook-signature` value: one `v1,<base64>` per secret, space-separated. The broker signs every
 * notification with it; use it to test your own webhook handler.
 */
export function signWebhook(input: SignWebhookInput): string {
  const seconds = String(input.timestamp instanceof Date ? Math.floor(input.timestamp.getTime() / 1000) : input.timestamp);
  return secretList(input.secret)
    .map((secret) => `v1,${hmac(secret, input.id, seconds, input.payload).toString('base64')}`)
    .join(' ');
}

/** A new secret in the form the broker issues: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function secretList(secret: WebhookSecret | readonly WebhookSecret[]): readonly WebhookSecret[] {
  return typeof secret === 'string' || secret instanceof Uint8Array ? [secret] : secret;
}

function hmac(secret: WebhookSecret, id: string, timestamp: string, payload: string | Uint8Array): Buffer {
  return createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.`).update(payload).digest();
}

const decodedKeys = new Map<string, Buffer>();

function secretKey(secret: WebhookSecret): Uint8Array {
  if (typeof secret !== 'string') return secret;
  let key = decodedKeys.get(secret);
  if (key === undefined) {
    key = secret.startsWith(SECRET_PREFIX) ? Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
    // Decoded once per secret: the broker signs every attempt with the same few; bounded all the same.
    if (decodedKeys.size >= 1000) decodedKeys.clear();
    decodedKeys.set(secret, key);
  }
  return key;
}

function text(payload: string | Uint8Array): string {
  return typeof payload === 'string' ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
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
