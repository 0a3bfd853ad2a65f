import { createHash } from 'node:crypto';

/**
 * The id of the interaction an inbound webhook makes on a session: derived from the session and the provider's
 * event id, so the intercept asked about it and the interaction recorded after carry the same id, and a webhook
 * the provider sends again names the same one (RFC 9562 UUIDv8: a name-based layout of our own, SHA-256).
 */
export function interactionIdFor(sessionId: string, providerEventId: string): string {
  const hash = createHash('sha256').update(`${sessionId}\u0000${providerEventId}`).digest();
  hash[6] = (hash[6] & 0x0f) | 0x80;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
