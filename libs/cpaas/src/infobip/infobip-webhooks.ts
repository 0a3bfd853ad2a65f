/**
 * Reading Infobip's webhooks (JSON), in the shapes of its generated SDKs' models
 * (infobip-api-java-client `com.infobip.model.*`, named beside each reader): inbound SMS
 * (`SmsInboundMessageResult`), SMS delivery reports (`SmsDeliveryResult`), and Calls API events
 * (`CallsEvent`: `CALL_RECEIVED`, the dialog events of a bridge). Infobip writes numbers as digits
 * without `+`; they come out E.164. Strict: a body that is not Infobip's is a 400 naming the field.
 * A webhook carries one result: a batched one (`results` with several) is refused, so Infobip sends it again.
 */
import { isE164 } from '../e164';
import { InvalidWebhookError, webhookObject } from '../errors';
import type { InboundEvent, StatusEvent } from '../provider';
import { infobipDialogAnswer } from './infobip-outcomes';

/** The Calls API event type (`CallsEvent.type`), or undefined for an SMS webhook. */
export function infobipEventType(body: unknown): string | undefined {
  try {
    const type = webhookObject(body).type;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

export function parseInfobipInbound(channel: 'sms' | 'voice', rawBody: Buffer, receivedAt: string): InboundEvent {
  const fields = webhookObject(rawBody);
  if (channel === 'voice') {
    // CallsEvent with CallReceivedEvent.properties.call (Call: id, from, to, direction).
    if (fields.type !== 'CALL_RECEIVED') throw new InvalidWebhookError('type must be CALL_RECEIVED for a call to answer', 'type');
    const callId = id(fields, 'callId');
    const call = object(object(fields, 'properties'), 'call', 'properties.call');
    return {
      channel,
      eventId: callId,
      callId,
      from: number(call, 'from', 'properties.call.from'),
      to: number(call, 'to', 'properties.call.to'),
      at: time(fields.timestamp) ?? receivedAt,
    };
  }
  // SmsInboundMessageResult.results[]: SmsInboundMessage (messageId, from, to, text, receivedAt).
  const message = onlyResult(fields);
  const messageId = id(message, 'messageId', 'results[0].messageId');
  const text = message.text ?? '';
  if (typeof text !== 'string' || text.length > 1600)
    throw new InvalidWebhookError('text must be a string of at most 1600 characters', 'results[0].text');
  return {
    channel,
    eventId: messageId,
    messageId,
    from: number(message, 'from', 'results[0].from'),
    to: number(message, 'to', 'results[0].to'),
    text,
    at: time(message.receivedAt) ?? receivedAt,
  };
}

/** A delivery report, or a Calls API event about a bridge (a dialog) or a call. */
export function parseInfobipStatus(rawBody: Buffer, receivedAt: string): StatusEvent {
  const fields = webhookObject(rawBody);
  if (typeof fields.type === 'string') return callEvent(fields, fields.type, receivedAt);
  // SmsDeliveryResult.results[]: SmsDeliveryReport (messageId, to, sender, status, error, doneAt).
  const report = onlyResult(fields);
  const messageId = id(report, 'messageId', 'results[0].messageId');
  const status = object(report, 'status', 'results[0].status');
  const group = status.groupName;
  if (typeof group !== 'string') throw new InvalidWebhookError('status.groupName is required', 'results[0].status.groupName');
  const eventId = `${messageId}:${group}`;
  const at = time(report.doneAt) ?? receivedAt;
  if (group === 'PENDING' || group === 'ACCEPTED') return { type: 'message.progress', eventId, messageId, status: group, at };
  const from = typeof report.sender === 'string' && /^\d{1,15}$/.test(report.sender) ? `+${report.sender}` : '';
  const to = number(report, 'to', 'results[0].to');
  if (group === 'DELIVERED') return { type: 'message.delivered', eventId, messageId, from, to, at };
  const type =
    group === 'REJECTED' ? 'message.failed' : group === 'UNDELIVERABLE' || group === 'EXPIRED' ? 'message.undelivered' : undefined;
  if (!type)
    throw new InvalidWebhookError(`status.groupName "${group.slice(0, 40)}" is not a message status group`, 'results[0].status.groupName');
  // SmsMessageError: groupName HANDSET_ERRORS / USER_ERRORS / OPERATOR_ERRORS, and the error's name.
  const error = report.error as { groupName?: unknown; name?: unknown } | undefined;
  const code = [error?.groupName, error?.name]
    .filter((part): part is string => typeof part === 'string' && /^[A-Z_]{1,64}$/.test(part))
    .join(':');
  return { type, eventId, messageId, from, to, at, ...(code ? { errorCode: code } : {}) };
}

/** Dialog events (CallsDialogFinishedEvent / CallsDialogFailedEvent: properties.dialog, properties.errorCode) settle a bridge. */
function callEvent(fields: Record<string, unknown>, type: string, receivedAt: string): StatusEvent {
  if (!/^[A-Z_]{1,64}$/.test(type)) throw new InvalidWebhookError('type must be a Calls API event type', 'type');
  const at = time(fields.timestamp) ?? receivedAt;
  if (type !== 'DIALOG_FINISHED' && type !== 'DIALOG_FAILED') {
    const callId = typeof fields.callId === 'string' ? id(fields, 'callId') : id(fields, 'dialogId');
    return { type: 'call.progress', eventId: `${callId}:${type}`, callId, status: type, at };
  }
  const properties = object(fields, 'properties');
  const dialog = object(properties, 'dialog', 'properties.dialog');
  const parent = object(dialog, 'parentCall', 'properties.dialog.parentCall');
  const child = dialog.childCall as Record<string, unknown> | undefined;
  const callId = id(parent, 'id', 'properties.dialog.parentCall.id');
  const bridgedCallId = child && typeof child.id === 'string' ? id(child, 'id', 'properties.dialog.childCall.id') : undefined;
  const from = number(parent, 'from', 'properties.dialog.parentCall.from');
  const to = child ? number(child, 'to', 'properties.dialog.childCall.to') : from;
  const errorCode = properties.errorCode as { name?: unknown } | undefined;
  const code = typeof errorCode?.name === 'string' ? errorCode.name : type === 'DIALOG_FINISHED' ? 'NORMAL_HANGUP' : 'UNKNOWN';
  const common = { eventId: `${callId}:dialog`, callId, ...(bridgedCallId ? { bridgedCallId } : {}), from, to, at };
  const answer = infobipDialogAnswer(code);
  if (answer === null)
    return { type: 'call.failed', ...common, reason: `Infobip could not set up the bridged call (${code.slice(0, 40)})` };
  return { type: 'call.completed', ...common, answer, durationSec: seconds(dialog.establishTime, dialog.endTime) };
}

function onlyResult(fields: Record<string, unknown>): Record<string, unknown> {
  const results = fields.results;
  if (!Array.isArray(results) || results.length !== 1 || typeof results[0] !== 'object' || results[0] === null)
    throw new InvalidWebhookError('results must hold exactly one result (switch off batching for this webhook)', 'results');
  return results[0] as Record<string, unknown>;
}

function object(fields: Record<string, unknown>, field: string, path = field): Record<string, unknown> {
  const value = fields[field];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidWebhookError(`${path} must be an object`, path);
  return value as Record<string, unknown>;
}

function id(fields: Record<string, unknown>, field: string, path = field): string {
  const value = fields[field];
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.:-]{1,100}$/.test(value))
    throw new InvalidWebhookError(`${path} must be an Infobip id (letters, digits, _ . : -; at most 100)`, path);
  return value;
}

function number(fields: Record<string, unknown>, field: string, path: string): string {
  const value = fields[field];
  const e164 = typeof value === 'string' ? (value.startsWith('+') ? value : `+${value}`) : undefined;
  if (!isE164(e164)) throw new InvalidWebhookError(`${path} must be a phone number (digits, E.164 without +)`, path);
  return e164;
}

function time(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function seconds(from: unknown, to: unknown): number {
  const a = typeof from === 'string' ? Date.parse(from) : NaN;
  const b = typeof to === 'string' ? Date.parse(to) : NaN;
  return Number.isNaN(a) || Number.isNaN(b) || b < a ? 0 : Math.round((b - a) / 1000);
}
