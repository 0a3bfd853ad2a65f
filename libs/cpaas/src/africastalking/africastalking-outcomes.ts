/**
 * What an Africa's Talking answer means for the breaker (docs/providers.md#the-africas-talking-outcome-table),
 * as data. The SMS API answers a send with HTTP 201 and one `statusCode` per recipient: that code
 * decides (the customer's input, not counted; our account or the vendor, counted). Other HTTP answers
 * are classified by status. The end of a bridged call (`hangupCause` / `lastBridgeHangupCause`, SIP
 * cause names) decides whether the bridge was set up: the callee's answers are successes, a cause on
 * the vendor's or the network's side is a call-setup failure. Each row has its test.
 */
import { httpStatusRule, outcomeRule as rule, type OutcomeRule } from '../outcome-rules';
import type { CallAnswer } from '../provider';

/** A row keyed by a recipient `statusCode`, or `HTTP nnn` / `HTTP nxx`. */
export type AfricasTalkingRule = OutcomeRule;

/** Recipient status codes that mean the message was taken (100 Processed, 101 Sent, 102 Queued). */
export const AFRICASTALKING_ACCEPTED_CODES: readonly number[] = [100, 101, 102];

/** Recipient status codes of a send that was not taken. */
export const AFRICASTALKING_RECIPIENT_RULES: readonly AfricasTalkingRule[] = [
  rule('401', 'RiskHold: the account is held for review', true, 'account'),
  rule('402', 'InvalidSenderId: our proxy number is not a sender this account may use', true, 'rejected'),
  rule('403', 'InvalidPhoneNumber', false, 'invalid-number'),
  rule('404', 'UnsupportedNumberType: the recipient cannot take SMS', false, 'invalid-number'),
  rule('405', 'InsufficientBalance', true, 'account'),
  rule('406', 'UserInBlacklist: the recipient opted out', false, 'bad-request'),
  rule('407', 'CouldNotRoute: no route to the recipient network', true, 'rejected'),
  rule('409', 'DoNotDisturbRejection: the recipient is on the DND register (NCC)', false, 'bad-request'),
  rule('500', 'InternalServerError', true, 'http-5xx'),
  rule('501', 'GatewayError', true, 'http-5xx'),
  rule('502', 'RejectedByGateway', true, 'rejected'),
];

/** HTTP answers other than a 201 with recipients. */
export const AFRICASTALKING_HTTP_RULES: readonly AfricasTalkingRule[] = [
  rule('HTTP 401', 'The username or API key was refused', true, 'auth'),
  rule('HTTP 403', 'The account may not use this API (IP allow-list, product not enabled)', true, 'account'),
  rule('HTTP 429', 'Rate limited', true, 'rate-limited'),
  rule('HTTP 408', 'Request timeout', true, 'timeout'),
  rule('HTTP 5xx', 'Server error', true, 'http-5xx'),
  rule('HTTP 400', 'Request refused as input (a malformed number or message)', false, 'bad-request'),
  rule('HTTP 4xx', 'Any other 4xx: the vendor cannot serve us (wrong route or API base)', true, 'rejected'),
];

const byRecipientCode = new Map(AFRICASTALKING_RECIPIENT_RULES.map((r) => [r.key, r]));

/** The rule for a recipient status code that is not an accepted one; an unknown code counts. */
export function africasTalkingRecipientRule(statusCode: number): AfricasTalkingRule {
  return byRecipientCode.get(String(statusCode)) ?? rule(String(statusCode), 'A status code this adapter does not know', true, 'rejected');
}

export function africasTalkingHttpRule(status: number): AfricasTalkingRule {
  return httpStatusRule(AFRICASTALKING_HTTP_RULES, status);
}

/**
 * How the dialled leg ended (`lastBridgeHangupCause`, else `hangupCause`): the callee's answer (not a
 * failure), or `null` for a cause on the vendor's or the network's side (the bridge was not set up).
 * `UNALLOCATED_NUMBER` and its kin are the callee's number, not the vendor: they count as no answer.
 */
export const AFRICASTALKING_HANGUP_CAUSES: Readonly<Record<string, CallAnswer | null>> = {
  NORMAL_CLEARING: 'completed',
  USER_BUSY: 'busy',
  NO_ANSWER: 'no-answer',
  NO_USER_RESPONSE: 'no-answer',
  ALLOTTED_TIMEOUT: 'no-answer',
  SUBSCRIBER_ABSENT: 'no-answer',
  UNALLOCATED_NUMBER: 'no-answer',
  INVALID_NUMBER_FORMAT: 'no-answer',
  USER_NOT_REGISTERED: 'no-answer',
  CALL_REJECTED: 'declined',
  ORIGINATOR_CANCEL: 'canceled',
  LOSE_RACE: 'canceled',
  NORMAL_TEMPORARY_FAILURE: null,
  SERVICE_UNAVAILABLE: null,
  NETWORK_OUT_OF_ORDER: null,
  DESTINATION_OUT_OF_ORDER: null,
  RECOVERY_ON_TIMER_EXPIRE: null,
  NORMAL_CIRCUIT_CONGESTION: null,
  SWITCH_CONGESTION: null,
  NO_ROUTE_DESTINATION: null,
  INCOMPATIBLE_DESTINATION: null,
  MEDIA_TIMEOUT: null,
  UNSPECIFIED: null,
};

/** The callee's answer for a hangup cause, or `null` (set-up failure); a cause not in the table counts as a failure. */
export function africasTalkingCallAnswer(cause: string): CallAnswer | null {
  return Object.hasOwn(AFRICASTALKING_HANGUP_CAUSES, cause) ? AFRICASTALKING_HANGUP_CAUSES[cause] : null;
}
