/**
 * Reading Africa's Talking's webhooks (form-encoded): the voice callback (`isActive=1`: a call to one of
 * our numbers; `isActive=0` on the same URL: the end of that call), SMS delivery reports and inbound
 * SMS (on the numbers that can receive them). Strict, so a body that is not Africa's Talking's is a
 * 400 naming the field. Event ids make a retried webhook recognisable: the call's `sessionId`, the
 * message `id` (with its status for a report).
 */
import { isE164 } from '../e164';
import { InvalidWebhookError } from '../errors';
import type { InboundEvent, StatusEvent } from '../provider';
import { africasTalkingCallAnswer } from './africastalking-outcomes';

export function africasTalkingParams(rawBody: Buffer): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(rawBody.toString('utf8')));
}

/** The voice callback's end-of-call notification comes to the inbound voice URL with `isActive=0`. */
export function isEndOfCall(params: Record<string, string>): boolean {
  return params.isActive === '0';
}

export function parseAfricasTalkingInbound(channel: 'sms' | 'voice', params: Record<string, string>, at: string): InboundEvent {
  if (channel === 'voice') {
    if (params.isActive !== '1') throw new InvalidWebhookError('isActive must be 1 for a call to answer', 'isActive');
    const callId = id(params, 'sessionId');
    return { channel, eventId: callId, callId, from: number(params, 'callerNumber'), to: number(params, 'destinationNumber'), at };
  }
  const messageId = id(params, 'id');
  const text = params.text ?? '';
  if (text.length > 1600) throw new InvalidWebhookError('text must be at most 1600 characters', 'text');
  return {
    channel,
    eventId: messageId,
    messageId,
    from: number(params, 'from'),
    to: number(params, 'to'),
    text,
    at: timestamp(params.date) ?? at,
  };
}

const DELIVERED = new Set(['Success']);
const NOT_DELIVERED: Record<string, 'message.undelivered' | 'message.failed'> = {
  Failed: 'message.undelivered',
  AbsentSubscriber: 'message.undelivered',
  Expired: 'message.undelivered',
  Rejected: 'message.failed',
};
const IN_PROGRESS = new Set(['Sent', 'Submitted', 'Buffered', 'Queued']);

/** The end of a call (`isActive=0`) or an SMS delivery report (`id`, `status`). */
export function parseAfricasTalkingStatus(params: Record<string, string>, at: string): StatusEvent {
  if (params.isActive !== undefined) {
    if (!isEndOfCall(params)) throw new InvalidWebhookError('isActive must be 0 for the end of a call', 'isActive');
    const callId = id(params, 'sessionId');
    const eventId = `${callId}:end`;
    const dialled = params.dialDestinationNumber;
    // A call that never reached a Dial (an out-of-session answer) ends without a bridge to report.
    if (!dialled) return { type: 'call.progress', eventId, callId, status: params.callSessionState ?? 'ended', at };
    const from = number(params, 'callerNumber');
    const to = number(params, 'dialDestinationNumber');
    const cause = params.lastBridgeHangupCause || params.hangupCause;
    if (!cause || !/^[A-Z_]{1,64}$/.test(cause)) throw new InvalidWebhookError('hangupCause must be a hangup cause name', 'hangupCause');
    const answer = africasTalkingCallAnswer(cause);
    if (answer === null)
      return {
        type: 'call.failed',
        eventId,
        callId,
        from,
        to,
        reason: `Africa's Talking could not set up the bridged call (${cause})`,
        at,
      };
    const duration = params.dialDurationInSeconds ?? params.durationInSeconds ?? '0';
    if (!/^\d{1,7}$/.test(duration))
      throw new InvalidWebhookError('dialDurationInSeconds must be a whole number of seconds', 'dialDurationInSeconds');
    return { type: 'call.completed', eventId, callId, from, to, answer, durationSec: Number(duration), at };
  }
  const messageId = id(params, 'id');
  const status = params.status;
  if (status === undefined) throw new InvalidWebhookError('status is required', 'status');
  const eventId = `${messageId}:${status}`;
  if (IN_PROGRESS.has(status)) return { type: 'message.progress', eventId, messageId, status, at };
  const type = DELIVERED.has(status) ? 'message.delivered' : NOT_DELIVERED[status];
  if (!type) throw new InvalidWebhookError(`status "${status.slice(0, 40)}" is not a delivery status`, 'status');
  const reason = params.failureReason && /^[A-Za-z]{1,64}$/.test(params.failureReason) ? params.failureReason : undefined;
  // A report names the recipient only; the sender is the proxy number the relay used.
  return { type, eventId, messageId, from: '', to: number(params, 'phoneNumber'), at, ...(reason ? { errorCode: reason } : {}) };
}

function id(params: Record<string, string>, field: string): string {
  const value = params[field];
  if (value === undefined || !/^[A-Za-z0-9_.:-]{1,100}$/.test(value))
    throw new InvalidWebhookError(`${field} must be an Africa's Talking id (letters, digits, _ . : -; at most 100)`, field);
  return value;
}

function number(params: Record<string, string>, field: string): string {
  const raw = params[field];
  const value = raw !== undefined && /^\d+$/.test(raw) ? `+${raw}` : raw;
  if (!isE164(value)) throw new InvalidWebhookError(`${field} must be an E.164 number`, field);
  return value;
}

function timestamp(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
