/**
 * Twilio-style sids for the broker's own rows: a two-letter prefix and the row's UUID as 32 lower-case hex
 * digits (`AC` for an account, `KC` for a session, …), so a sid is the id itself and needs no table of its
 * own. The Twilio-Proxy-compatible API (compat/twilio-proxy) speaks them; `GET /v1/account` shows the
 * account's.
 */

/** The prefixes the broker hands out: Twilio's for the resource each one names. */
export type TwilioSidPrefix = 'AC' | 'KS' | 'KC' | 'KP' | 'KI' | 'PN';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `AC` + the UUID's 32 hex digits. */
export function twilioSid(prefix: TwilioSidPrefix, uuid: string): string {
  if (!UUID.test(uuid)) throw new TypeError(`not a UUID: ${uuid}`);
  return prefix + uuid.replace(/-/g, '').toLowerCase();
}

/** The UUID a sid of this prefix names, or null when it is not one (another prefix, not 32 hex digits). */
export function uuidOfTwilioSid(prefix: TwilioSidPrefix, sid: string): string | null {
  const match = new RegExp(`^${prefix}([0-9a-fA-F]{32})$`).exec(sid);
  if (!match) return null;
  const hex = match[1].toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
