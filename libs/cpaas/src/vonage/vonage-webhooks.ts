/**
 * Reading Vonage's webhook bodies (JSON): the Messages API's inbound SMS and message status, the
 * Voice API's answer (configured as POST) and call events. Vonage writes numbers as digits without
 * the `+`; they come out E.164. Strict, so a body that is not Vonage's is a 400 naming the field.
 *
 * Event ids make a retried webhook recognisable (relayed once): the inbound message's
 * `message_uuid`, the answered call's `uuid`, and for statuses the uuid with the status.
 */
import { isE164 } from '../e164';
import { InvalidWebhookError, webhookObject } from '../errors';
import type { InboundEvent } from '../provider';

const VONAGE_MESSAGE_STATUSES = ['submitted', 'delivered', 'read', 'rejected', 'undeliverable'] as const;
type VonageMessageStatus = (typeof VONAGE_MESSAGE_STATUSES)[number];

/**
 * Voice API call statuses. `failed` is a call-setup failure (docs/providers.md#vonage-webhooks); the callee's answers are
 * successes; the rest are progress reports that change nothing.
 */
const VONAGE_CALL_ANSWERS = {
  completed: 'completed',
  busy: 'busy',
  timeout: 'no-answer',
  unanswered: 'no-answer',
  rejected: 'declined',
  cancelled: 'canceled',
} as const;
type VonageCallAnswer = (typeof VONAGE_CALL_ANSWERS)[keyof typeof VONAGE_CALL_ANSWERS];
const CALL_PROGRESS = new Set(['started', 'ringing', 'answered', 'disconnected', 'human', 'machine', 'transfer', 'record', 'input']);

type VonageStatusEvent =
  | {
      kind: 'message';
      eventId: string;
      messageId: string;
      /** Our proxy number, which sent the message. */
      from: string;
      /** The participant it went to. */
      to: string;
      status: VonageMessageStatus;
      /** The error code after `#` in `error.type`, with its detail, for `rejected` / `undeliverable`. */
      error?: string;
      at: string;
    }
  | {
      kind: 'call';
      eventId: string;
      /** The leg the event is about: for the bridge, the outbound leg to the other participant. */
      callId: string;
      conversationId?: string;
      from: string;
      to: string;
      /** `setup-failed` for `failed`, the callee's answer when the leg ended, `progress` otherwise. */
      outcome: { type: 'setup-failed' } | { type: 'answer'; answer: VonageCallAnswer } | { type: 'progress' };
      status: string;
      durationSec: number;
      at: string;
    };

export function parseVonageInbound(channel: 'sms' | 'voice', body: unknown, receivedAt: string): InboundEvent {
  const fields = webhookObject(body);
  if (channel === 'sms') {
    if (fields.channel !== 'sms') throw new InvalidWebhookError('channel must be sms', 'channel');
    if (fields.message_type !== 'text') throw new InvalidWebhookError('message_type must be text', 'message_type');
    const messageId = id(fields, 'message_uuid');
    return {
      channel,
      eventId: messageId,
      messageId,
      from: number(fields, 'from'),
      to: number(fields, 'to'),
      text: message(fields, 'text'),
      at: optionalTimestamp(fields, 'timestamp') ?? receivedAt,
    };
  }
  const callId = id(fields, 'uuid');
  return { channel, eventId: callId, callId, from: number(fields, 'from'), to: number(fields, 'to'), at: receivedAt };
}

/** One status route for both APIs: a body with `message_uuid` is a message status, one with `uuid` a call event. */
export function parseVonageStatus(body: unknown, receivedAt: string): VonageStatusEvent {
  const fields = webhookObject(body);
  if (fields.message_uuid !== undefined) {
    const messageId = id(fields, 'message_uuid');
    const status = fields.status;
    if (!VONAGE_MESSAGE_STATUSES.includes(status as VonageMessageStatus))
      throw new InvalidWebhookError(`status must be one of ${VONAGE_MESSAGE_STATUSES.join(', ')}`, 'status');
    const error = describeError(fields.error);
    return {
      kind: 'message',
      eventId: `${messageId}:${status as string}`,
      messageId,
      from: number(fields, 'from'),
      to: number(fields, 'to'),
      status: status as VonageMessageStatus,
      ...(error ? { error } : {}),
      at: optionalTimestamp(fields, 'timestamp') ?? receivedAt,
    };
  }
  if (fields.uuid === undefined) throw new InvalidWebhookError('body must carry message_uuid or uuid', 'uuid');
  const callId = id(fields, 'uuid');
  const status = fields.status;
  const answered = typeof status === 'string' && Object.hasOwn(VONAGE_CALL_ANSWERS, status);
  if (typeof status !== 'string' || !(answered || status === 'failed' || CALL_PROGRESS.has(status)))
    throw new InvalidWebhookError('status must be a Voice API call status', 'status');
  const outcome: Extract<VonageStatusEvent, { kind: 'call' }>['outcome'] =
    status === 'failed'
      ? { type: 'setup-failed' }
      : answered
        ? { type: 'answer', answer: VONAGE_CALL_ANSWERS[status as keyof typeof VONAGE_CALL_ANSWERS] }
        : { type: 'progress' };
  const conversationId = fields.conversation_uuid === undefined ? undefined : id(fields, 'conversation_uuid');
  return {
    kind: 'call',
    eventId: `${callId}:${status}`,
    callId,
    ...(conversationId ? { conversationId } : {}),
    from: number(fields, 'from'),
    to: number(fields, 'to'),
    outcome,
    status,
    durationSec: duration(fields.duration),
    at: optionalTimestamp(fields, 'timestamp') ?? receivedAt,
  };
}

function id(fields: Record<string, unknown>, field: string): string {
  const value = fields[field];
  if (typeof value !== 'string' || !/^[A-Za-z0-9-]{1,100}$/.test(value))
    throw new InvalidWebhookError(`${field} must be a Vonage id (letters, digits, dashes; at most 100)`, field);
  return value;
}

/** Vonage's `447700900001`, or already `+447700900001`, to E.164. */
function number(fields: Record<string, unknown>, field: string): string {
  const value = fields[field];
  const e164 = typeof value === 'string' ? (value.startsWith('+') ? value : `+${value}`) : undefined;
  if (!isE164(e164)) throw new InvalidWebhookError(`${field} must be a phone number (digits, E.164 without +)`, field);
  return e164;
}

function message(fields: Record<string, unknown>, field: string): string {
  const value = fields[field];
  if (typeof value !== 'string' || value.length > 1600)
    throw new InvalidWebhookError(`${field} must be a string of at most 1600 characters`, field);
  return value;
}

function optionalTimestamp(fields: Record<string, unknown>, field: string): string | undefined {
  const value = fields[field];
  if (value === undefined) return undefined;
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new InvalidWebhookError(`${field} must be an ISO 8601 timestamp`, field);
  return new Date(ms).toISOString();
}

/** Voice events carry `duration` as a string of seconds on ended legs. */
function duration(value: unknown): number {
  const seconds = typeof value === 'string' && /^\d{1,7}$/.test(value) ? Number(value) : typeof value === 'number' ? value : 0;
  return Number.isInteger(seconds) && seconds >= 0 ? seconds : 0;
}

function describeError(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, title, detail } = error as { type?: unknown; title?: unknown; detail?: unknown };
  const code = typeof type === 'string' && type.includes('#') ? type.slice(type.lastIndexOf('#') + 1) : undefined;
  const words = [code ?? (typeof title === 'string' || typeof title === 'number' ? String(title) : undefined), detail]
    .filter((part): part is string => typeof part === 'string' && part.length > 0)
    .join(': ');
  return words.length ? words.slice(0, 200) : undefined;
}
