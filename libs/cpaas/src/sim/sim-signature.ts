/**
 * Webhook signatures of the simulated provider: hex HMAC-SHA256 over `${timestamp}.${rawBody}`,
 * with the timestamp in unix seconds. Headers: `x-sim-timestamp: 1752581735` and
 * `x-sim-signature: v1=<hex>` (several space-separated `v1=` values are accepted, for rotation).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIM_SIGNATURE_HEADER = 'x-sim-signature';
export const SIM_TIMESTAMP_HEADER = 'x-sim-timestamp';
/** How far a webhook's timestamp may be from our clock, either way. */
export const SIM_SIGNATURE_TOLERANCE_SEC = 300;

export function signSimWebhook(secret: string, rawBody: string | Buffer, timestampSec: number): Record<string, string> {
  return {
    [SIM_TIMESTAMP_HEADER]: String(timestampSec),
    [SIM_SIGNATURE_HEADER]: `v1=${digest(secret, timestampSec, rawBody).toString('hex')}`,
  };
}

export interface SimSignatureCheck {
  secret: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  nowMs: number;
  toleranceSec?: number;
}

export function verifySimSignature({
  secret,
  headers,
  rawBody,
  nowMs,
  toleranceSec = SIM_SIGNATURE_TOLERANCE_SEC,
}: SimSignatureCheck): boolean {
  const timestamp = header(headers, SIM_TIMESTAMP_HEADER);
  const signatures = header(headers, SIM_SIGNATURE_HEADER);
  if (!timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  if (!Buffer.isBuffer(rawBody)) return false;
  const timestampSec = Number(timestamp);
  if (Math.abs(nowMs / 1000 - timestampSec) > toleranceSec) return false;
  const expected = digest(secret, timestampSec, rawBody);
  let valid = false;
  for (const candidate of signatures.split(' ')) {
    const match = /^v1=([0-9a-f]{64})$/.exec(candidate);
    // Every candidate is compared, so the time taken does not say which one matched.
    if (match && timingSafeEqual(Buffer.from(match[1], 'hex'), expected)) valid = true;
  }
  return valid;
}

function digest(secret: string, timestampSec: number, rawBody: string | Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestampSec}.`).update(rawBody).digest();
}

/** Node lowercases header names; a framework that does not still finds its header. */
function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}
