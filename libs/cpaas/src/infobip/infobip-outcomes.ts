/**
 * What an Infobip answer means for the breaker (docs/providers.md#the-infobip-outcome-table), as data.
 * HTTP errors by status (Infobip's error body names the problem, `errorCode` / `serviceException.messageId`,
 * and is quoted in the reason); a 2xx send whose message status is in the REJECTED group by the
 * status `name`; the end of a bridged call (a dialog) by its `errorCode.name` (the Calls API's
 * CallsErrorCode). Each row has its test.
 */
import { httpStatusRule, outcomeRule as rule, type OutcomeRule } from '../outcome-rules';
import type { CallAnswer } from '../provider';

/** A row keyed by `HTTP nnn` / `HTTP nxx`, or a message status name (REJECTED group). */
export type InfobipRule = OutcomeRule;

export const INFOBIP_HTTP_RULES: readonly InfobipRule[] = [
  rule('HTTP 401', 'API key refused', true, 'auth'),
  rule('HTTP 403', 'The account may not use this API or sender', true, 'account'),
  rule('HTTP 429', 'Rate limited', true, 'rate-limited'),
  rule('HTTP 408', 'Request timeout', true, 'timeout'),
  rule('HTTP 5xx', 'Server error', true, 'http-5xx'),
  rule('HTTP 400', 'Request refused as input (a malformed number or text)', false, 'bad-request'),
  rule('HTTP 4xx', 'Any other 4xx (404 a wrong API base, a call already gone): the vendor cannot serve us', true, 'rejected'),
];

/** Message statuses of the REJECTED group in a send's answer (SmsMessageStatus.name). */
export const INFOBIP_REJECTED_RULES: readonly InfobipRule[] = [
  rule('REJECTED_DESTINATION', 'The destination is not a number Infobip can reach', false, 'invalid-number'),
  rule('REJECTED_INVALID_DESTINATION', 'Invalid destination address', false, 'invalid-number'),
  rule('REJECTED_PREFIX_MISSING', 'The number has no country prefix', false, 'invalid-number'),
  rule('REJECTED_DND', 'The recipient is on the do-not-disturb register', false, 'bad-request'),
  rule('REJECTED_NOT_ENOUGH_CREDITS', 'Not enough credit', true, 'account'),
  rule('REJECTED_SENDER', 'Our proxy number is not a sender this account may use', true, 'rejected'),
  rule('REJECTED_SOURCE', 'Our proxy number is not a sender this account may use', true, 'rejected'),
  rule('REJECTED_ROUTE_NOT_AVAILABLE', 'No route to the destination network', true, 'rejected'),
  rule('REJECTED_NETWORK', 'The destination network refused the account', true, 'rejected'),
  rule('REJECTED_FLOODING_FILTER', 'Sending too fast to this destination', true, 'rate-limited'),
  rule('REJECTED_SYSTEM_ERROR', 'Infobip system error', true, 'http-5xx'),
];

const byRejection = new Map(INFOBIP_REJECTED_RULES.map((r) => [r.key, r]));

export function infobipHttpRule(status: number): InfobipRule {
  return httpStatusRule(INFOBIP_HTTP_RULES, status);
}

/** A REJECTED status this table does not name counts: the message did not go, and nothing says it was our input. */
export function infobipRejectedRule(name: string): InfobipRule {
  return byRejection.get(name) ?? rule(name, 'A rejection this adapter does not know', true, 'rejected');
}

/**
 * How a dialog (the bridged call) ended, by `errorCode.name`: the callee's answer, or `null` when the
 * bridge could not be set up (counted). An unreachable or unknown callee number is the callee's, not
 * the vendor's: no answer.
 */
export const INFOBIP_DIALOG_ENDINGS: Readonly<Record<string, CallAnswer | null>> = {
  NORMAL_HANGUP: 'completed',
  MACHINE_DETECTED: 'completed',
  BUSY: 'busy',
  NO_ANSWER: 'no-answer',
  DESTINATION_UNAVAILABLE: 'no-answer',
  DESTINATION_NOT_FOUND: 'no-answer',
  INVALID_DESTINATION: 'no-answer',
  REJECTED: 'declined',
  CANCELLED: 'canceled',
  FORBIDDEN: null,
  INVALID_REQUEST: null,
  REQUEST_TIMEOUT: null,
  SERVICE_UNAVAILABLE: null,
};

/** A code not in the table counts as a set-up failure. */
export function infobipDialogAnswer(code: string): CallAnswer | null {
  return Object.hasOwn(INFOBIP_DIALOG_ENDINGS, code) ? INFOBIP_DIALOG_ENDINGS[code] : null;
}
