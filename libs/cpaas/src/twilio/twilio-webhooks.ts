/**
 * Twilio's webhooks: form-encoded bodies, `X-Twilio-Signature` checked with the official
 * `twilio` package's `validateRequest` (HMAC-SHA1 over the full public URL and the sorted
 * parameters; not rewritten here), and the bodies read into the port's events, strictly, so a
 * body that is not Twilio's is a 400 naming the field.
 */
import twilio from 'twilio';
import { isE164 } from '../e164';
import { InvalidWebhookError } from '../errors';
import type { CallAnswer, InboundEvent, StatusEvent, WebhookRequest, WebhookVerification } from '../provider';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** The form parameters of a webhook (Twilio sends each once). */
export function twilioParams(rawBody: Buffer): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(rawBody.toString('utf8')));
}

export function verifyTwilioWebhook(authToken: string, req: WebhookRequest): WebhookVerification {
  const raw = req.headers[TWILIO_SIGNATURE_HEADER];
  const signature = Array.isArray(raw) ? raw[0] : raw;
  if (signature === undefined || signature === '') return 'missing';
  return twilio.validateRequest(authToken, signature, req.url, twilioParams(req.rawBody)) ? 'valid' : 'invalid';
}

export function parseTwilioInbound(channel: 'sms' | 'voice', params: Record<string, string>, accountSid: string, at: string): InboundEvent {
  ownAccount(params, accountSid);
  const from = number(params, 'From');
  const to = number(params, 'To');
  if (channel === 'sms') {
    const messageId = sid(params, 'MessageSid', /^(SM|MM)[0-9a-f]{32}$/);
    const body = params.Body ?? '';
    if (body.length > 1600) throw new InvalidWebhookError('Body must be at most 1600 characters', 'Body');
    return { channel, eventId: messageId, messageId, from, to, text: body, at };
  }
  const callId = sid(params, 'CallSid', /^CA[0-9a-f]{32}$/);
  return { channel, eventId: callId, callId, from, to, at };
}

const DELIVERED = new Set(['delivered', 'read']);
const NOT_DELIVERED: Record<string, 'message.undelivered' | 'message.failed'> = {
  undelivered: 'message.undelivered',
  failed: 'message.failed',
  canceled: 'message.failed',
};
const IN_PROGRESS = new Set(['accepted', 'scheduled', 'queued', 'sending', 'sent', 'receiving', 'received']);
/** `<Dial action>` outcomes that set up the call (docs/providers.md#what-the-breaker-learns-from-and-when); `failed` is not one. */
const DIAL_ANSWERS: Record<string, CallAnswer> = {
  completed: 'completed',
  answered: 'completed',
  busy: 'busy',
  'no-answer': 'no-answer',
  canceled: 'canceled',
};

/** A message status callback (`MessageStatus`) or a `<Dial action>` callback (`DialCallStatus`). */
export function parseTwilioStatus(params: Record<string, string>, accountSid: string, at: string): StatusEvent {
  ownAccount(params, accountSid);
  if (params.DialCallStatus !== undefined) {
    const callId = sid(params, 'CallSid', /^CA[0-9a-f]{32}$/);
    const bridgedCallId = params.DialCallSid ? sid(params, 'DialCallSid', /^CA[0-9a-f]{32}$/) : undefined;
    const common = {
      eventId: `${callId}:dial`,
      callId,
      ...(bridgedCallId ? { bridgedCallId } : {}),
      from: number(params, 'From'),
      to: number(params, 'To'),
      at,
    };
    const status = params.DialCallStatus;
    if (status === 'failed')
      return { type: 'call.failed', ...common, reason: 'Twilio could not set up the bridged call (DialCallStatus=failed)' };
    const answer = DIAL_ANSWERS[status];
    if (!answer) throw new InvalidWebhookError(`DialCallStatus "${status.slice(0, 40)}" is not a dial outcome`, 'DialCallStatus');
    const duration = params.DialCallDuration ?? '0';
    if (!/^\d{1,7}$/.test(duration))
      throw new InvalidWebhookError('DialCallDuration must be a whole number of seconds', 'DialCallDuration');
    return { type: 'call.completed', ...common, answer, durationSec: Number(duration) };
  }
  const messageId = sid(params, 'MessageSid', /^(SM|MM)[0-9a-f]{32}$/);
  const status = params.MessageStatus;
  if (status === undefined) throw new InvalidWebhookError('MessageStatus or DialCallStatus is required', 'MessageStatus');
  const eventId = `${messageId}:${status}`;
  if (IN_PROGRESS.has(status)) return { type: 'message.progress', eventId, messageId, status, at };
  const type = DELIVERED.has(status) ? 'message.delivered' : NOT_DELIVERED[status];
  if (!type) throw new InvalidWebhookError(`MessageStatus "${status.slice(0, 40)}" is not a message status`, 'MessageStatus');
  const errorCode = params.ErrorCode && /^\d{1,6}$/.test(params.ErrorCode) ? params.ErrorCode : undefined;
  return { type, eventId, messageId, from: number(params, 'From'), to: number(params, 'To'), at, ...(errorCode ? { errorCode } : {}) };
}

function ownAccount(params: Record<string, string>, accountSid: string): void {
  if (params.AccountSid !== accountSid) throw new InvalidWebhookError('AccountSid is not this provider’s account', 'AccountSid');
}

function sid(params: Record<string, string>, field: string, pattern: RegExp): string {
  const value = params[field];
  if (value === undefined || !pattern.test(value)) throw new InvalidWebhookError(`${field} must be a Twilio SID`, field);
  return value;
}

function number(params: Record<string, string>, field: string): string {
  const value = params[field];
  if (!isE164(value)) throw new InvalidWebhookError(`${field} must be an E.164 number`, field);
  return value;
}
