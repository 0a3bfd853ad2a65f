/**
 * Which Twilio answers count against the provider's breaker and which are the customer's input
 * (docs/providers.md#the-outcome-table). Rules are data, looked up in this order: the Twilio error `code` in the body, then
 * the exact HTTP status, then the status class. docs/providers.md carries the same table; its
 * test checks every row. Answers without an HTTP status (timeouts, transport errors) and 2xx
 * answers without a SID are classified in the adapter and listed in TWILIO_OTHER_OUTCOMES.
 */
import type { FailureCause } from '../provider';

export interface TwilioOutcomeRule {
  /** A Twilio error code (`code` in the error body); null for a rule on the HTTP status. */
  code: number | null;
  /** An exact status, a class (`4xx`, `5xx`), or null for a rule on the code. */
  status: number | '4xx' | '5xx' | null;
  countsAgainstProvider: boolean;
  cause: FailureCause;
  meaning: string;
}

export const TWILIO_OUTCOMES: readonly TwilioOutcomeRule[] = [
  { code: 20429, status: null, countsAgainstProvider: true, cause: 'rate-limited', meaning: 'Too many requests' },
  { code: 14107, status: null, countsAgainstProvider: true, cause: 'rate-limited', meaning: 'SMS send rate limit exceeded' },
  { code: 30001, status: null, countsAgainstProvider: true, cause: 'rate-limited', meaning: 'Message queue overflow' },
  { code: 20003, status: null, countsAgainstProvider: true, cause: 'auth', meaning: 'Authentication refused (account SID or auth token)' },
  { code: 20005, status: null, countsAgainstProvider: true, cause: 'account', meaning: 'Account not active (suspended or closed)' },
  { code: 10001, status: null, countsAgainstProvider: true, cause: 'account', meaning: 'Account is not active' },
  { code: 20404, status: null, countsAgainstProvider: true, cause: 'bad-request', meaning: 'Resource not found (a wrong account SID)' },
  { code: 21211, status: null, countsAgainstProvider: false, cause: 'invalid-number', meaning: "Invalid 'To' phone number" },
  { code: 21614, status: null, countsAgainstProvider: false, cause: 'invalid-number', meaning: "'To' number is not a valid mobile number" },
  { code: 21612, status: null, countsAgainstProvider: false, cause: 'invalid-number', meaning: "'To' number cannot be reached by SMS" },
  { code: 21610, status: null, countsAgainstProvider: false, cause: 'bad-request', meaning: 'Recipient unsubscribed (replied STOP)' },
  {
    code: 21408,
    status: null,
    countsAgainstProvider: false,
    cause: 'bad-request',
    meaning: "No permission to send to the 'To' number's region",
  },
  {
    code: 21606,
    status: null,
    countsAgainstProvider: false,
    cause: 'bad-request',
    meaning: "The 'From' proxy number cannot send to this destination",
  },
  { code: 21617, status: null, countsAgainstProvider: false, cause: 'bad-request', meaning: 'Message body over 1600 characters' },
  { code: null, status: 429, countsAgainstProvider: true, cause: 'rate-limited', meaning: 'Rate limited' },
  { code: null, status: 401, countsAgainstProvider: true, cause: 'auth', meaning: 'Authentication refused' },
  { code: null, status: 408, countsAgainstProvider: true, cause: 'timeout', meaning: 'Request timeout' },
  { code: null, status: '5xx', countsAgainstProvider: true, cause: 'http-5xx', meaning: 'Twilio server error' },
  { code: null, status: 400, countsAgainstProvider: false, cause: 'bad-request', meaning: 'Any other refusal of what we sent (the input)' },
  {
    code: null,
    status: '4xx',
    countsAgainstProvider: true,
    cause: 'bad-request',
    meaning: 'Any other 4xx (403, 404, 405...): Twilio cannot serve us',
  },
];

/** Outcomes that are not an HTTP error answer; the adapter classifies them, always counted. */
export const TWILIO_OTHER_OUTCOMES: ReadonlyArray<{ outcome: string; cause: FailureCause; countsAgainstProvider: boolean }> = [
  { outcome: 'no answer within PROVIDER_CALL_TIMEOUT_MS', cause: 'timeout', countsAgainstProvider: true },
  { outcome: 'connection refused, reset or dropped; DNS failure', cause: 'transport', countsAgainstProvider: true },
  { outcome: '2xx without a SID (or an account whose status is not active)', cause: 'rejected', countsAgainstProvider: true },
  { outcome: '2xx whose body is not a JSON object', cause: 'malformed', countsAgainstProvider: true },
];

/** The rule for an HTTP error answer (status ≥ 300) with the Twilio error code it carried, if any. */
export function twilioOutcome(status: number, code: number | undefined): TwilioOutcomeRule {
  const byCode = code === undefined ? undefined : TWILIO_OUTCOMES.find((rule) => rule.code === code);
  if (byCode) return byCode;
  const byStatus = TWILIO_OUTCOMES.find((rule) => rule.code === null && rule.status === status);
  if (byStatus) return byStatus;
  const cls = status >= 500 ? '5xx' : '4xx';
  return TWILIO_OUTCOMES.find((rule) => rule.code === null && rule.status === cls)!;
}
