import { randomBytes } from 'node:crypto';

/**
 * A UUID of version 7 (RFC 9562): the instant's milliseconds in its first 48 bits, random after. A Proxy
 * Session's `date_created` is to the second, as Twilio writes it, so its id is what orders the Sessions of
 * one second in a list (newest first): ids made a millisecond or more apart sort as they were made.
 */
export function timeOrderedUuid(ms: number): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(Math.floor(ms), 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
