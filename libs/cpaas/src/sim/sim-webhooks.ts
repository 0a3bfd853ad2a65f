/** Reading the simulated provider's webhook bodies into the port's events; strict, so a bad body is a 400. */
import { isE164 } from '../e164';
import { InvalidWebhookError, webhookObject } from '../errors';
import { CALL_ANSWERS, type CallAnswer, type InboundEvent, type StatusEvent } from '../provider';

export function parseSimInbound(channel: 'sms' | 'voice', body: unknown): InboundEvent {
  const fields = webhookObject(body);
  const common = { eventId: text(fields, 'eventId'), from: number(fields, 'from'), to: number(fields, 'to'), at: timestamp(fields, 'at') };
  if (channel === 'sms') return { channel, ...common, messageId: text(fields, 'messageId'), text: message(fields, 'text') };
  return { channel, ...common, callId: text(fields, 'callId') };
}

export function parseSimStatus(body: unknown): StatusEvent {
  const fields = webhookObject(body);
  const common = { eventId: text(fields, 'eventId'), from: number(fields, 'from'), to: number(fields, 'to'), at: timestamp(fields, 'at') };
  switch (fields.type) {
    case 'message.delivered':
      return { type: fields.type, ...common, messageId: text(fields, 'messageId') };
    case 'call.completed': {
      const answer = fields.answer;
      if (!CALL_ANSWERS.includes(answer as CallAnswer))
        throw new InvalidWebhookError(`answer must be one of ${CALL_ANSWERS.join(', ')}`, 'answer');
      const durationSec = fields.durationSec;
      if (typeof durationSec !== 'number' || !Number.isInteger(durationSec) || durationSec < 0)
        throw new InvalidWebhookError('durationSec must be a non-negative integer', 'durationSec');
      const bridgedCallId = fields.bridgedCallId === undefined ? undefined : text(fields, 'bridgedCallId');
      return {
        type: fields.type,
        ...common,
        callId: text(fields, 'callId'),
        ...(bridgedCallId === undefined ? {} : { bridgedCallId }),
        answer: answer as CallAnswer,
        durationSec,
      };
    }
    default:
      throw new InvalidWebhookError('type must be message.delivered or call.completed', 'type');
  }
}

function text(fields: Record<string, unknown>, field: string): string {
  const value = fields[field];
  if (typeof value !== 'string' || value.length === 0 || value.length > 200)
    throw new InvalidWebhookError(`${field} must be a non-empty string of at most 200 characters`, field);
  return value;
}

function message(fields: Record<string, unknown>, field: string): string {
  const value = fields[field];
  if (typeof value !== 'string' || value.length > 1600)
    throw new InvalidWebhookError(`${field} must be a string of at most 1600 characters`, field);
  return value;
}

function number(fields: Record<string, unknown>, field: string): string {
  const value = fields[field];
  if (!isE164(value)) throw new InvalidWebhookError(`${field} must be an E.164 number`, field);
  return value;
}

function timestamp(fields: Record<string, unknown>, field: string): string {
  const value = fields[field];
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value)))
    throw new InvalidWebhookError(`${field} must be an ISO 8601 timestamp`, field);
  return value;
}
