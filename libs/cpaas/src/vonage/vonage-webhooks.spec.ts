import { isInvalidWebhookError } from '../errors';
import { parseVonageInbound, parseVonageStatus } from './vonage-webhooks';

const at = '2026-07-15T12:15:35.907Z';

// Bodies shaped as Vonage's documentation shows them (Messages API v1 inbound and status, Voice API answer and event).
const inboundSms = {
  channel: 'sms',
  message_uuid: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
  to: '447700900000',
  from: '447700900001',
  timestamp: '2025-02-03T12:14:25Z',
  text: 'Hello From Vonage!',
  sms: { num_messages: '1', keyword: 'HELLO' },
  usage: { price: '0.0057', currency: 'EUR' },
  message_type: 'text',
};
const answer = {
  from: '447700900001',
  to: '447700900000',
  uuid: '63f61863-4a51-4f6b-86e1-46edebcf9356',
  conversation_uuid: 'CON-f972836a-550f-45fa-956c-12a2ab5b7d22',
  region_url: 'https://api-eu-3.vonage.com',
};
const messageStatus = {
  message_uuid: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
  to: '447700900001',
  from: '447700900000',
  timestamp: '2025-02-03T12:14:25Z',
  status: 'delivered',
  usage: { currency: 'EUR', price: '0.0333' },
  channel: 'sms',
};
const callEvent = (status: string, extra: object = {}) => ({
  from: '447700900000',
  to: '447700900001',
  uuid: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
  conversation_uuid: 'CON-aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
  status,
  direction: 'outbound',
  timestamp: '2025-02-03T12:14:25.000Z',
  ...extra,
});

function fieldOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (isInvalidWebhookError(error)) return error.field ?? '(body)';
    throw error;
  }
  return undefined;
}

describe('Vonage webhooks', () => {
  it('reads an inbound SMS (Messages API) with E.164 numbers; the message uuid is the event id', () => {
    expect(parseVonageInbound('sms', inboundSms, at)).toEqual({
      channel: 'sms',
      eventId: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
      messageId: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
      from: '+447700900001',
      to: '+447700900000',
      text: 'Hello From Vonage!',
      at: '2025-02-03T12:14:25.000Z',
    });
    expect(parseVonageInbound('sms', Buffer.from(JSON.stringify(inboundSms)), at).eventId).toBe(inboundSms.message_uuid);
  });

  it('reads the answer webhook of an inbound call; the call uuid is the event id', () => {
    expect(parseVonageInbound('voice', answer, at)).toEqual({
      channel: 'voice',
      eventId: answer.uuid,
      callId: answer.uuid,
      from: '+447700900001',
      to: '+447700900000',
      at,
    });
  });

  it.each([
    ['from', { ...inboundSms, from: undefined }],
    ['from', { ...inboundSms, from: 'Unknown' }],
    ['to', { ...inboundSms, to: '44-7700' }],
    ['channel', { ...inboundSms, channel: 'whatsapp' }],
    ['message_type', { ...inboundSms, message_type: 'image' }],
    ['message_uuid', { ...inboundSms, message_uuid: '../../etc' }],
    ['text', { ...inboundSms, text: 'x'.repeat(1601) }],
    ['timestamp', { ...inboundSms, timestamp: 'yesterday' }],
    ['(body)', 'not json'],
    ['(body)', [inboundSms]],
  ])('an inbound SMS with a bad %s is refused, naming it', (field, body) => {
    expect(fieldOf(() => parseVonageInbound('sms', body, at))).toBe(field);
  });

  it('a message status: delivered, and undeliverable with the error code', () => {
    expect(parseVonageStatus(messageStatus, at)).toEqual({
      kind: 'message',
      eventId: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab:delivered',
      messageId: messageStatus.message_uuid,
      from: '+447700900000',
      to: '+447700900001',
      status: 'delivered',
      at: '2025-02-03T12:14:25.000Z',
    });
    const failed = parseVonageStatus(
      {
        ...messageStatus,
        status: 'undeliverable',
        error: { type: 'https://developer.vonage.com/api-errors/messages#1260', title: 1260, detail: 'Destination unreachable' },
      },
      at,
    );
    expect(failed).toMatchObject({
      status: 'undeliverable',
      error: '1260: Destination unreachable',
      eventId: `${messageStatus.message_uuid}:undeliverable`,
    });
    expect(fieldOf(() => parseVonageStatus({ ...messageStatus, status: 'lost' }, at))).toBe('status');
  });

  it('call events: failed is a call-setup failure', () => {
    expect(parseVonageStatus(callEvent('failed'), at)).toMatchObject({
      kind: 'call',
      outcome: { type: 'setup-failed' },
      eventId: `${callEvent('x').uuid}:failed`,
    });
  });

  it.each([
    ['completed', 'completed'],
    ['busy', 'busy'],
    ['timeout', 'no-answer'],
    ['unanswered', 'no-answer'],
    ['rejected', 'declined'],
    ['cancelled', 'canceled'],
  ])('call event %s is a successful setup answered %s', (status, answerName) => {
    expect(parseVonageStatus(callEvent(status, { duration: '12' }), at)).toMatchObject({
      kind: 'call',
      outcome: { type: 'answer', answer: answerName },
      from: '+447700900000',
      to: '+447700900001',
      durationSec: 12,
    });
  });

  it.each(['started', 'ringing', 'answered'])('call event %s is progress only', (status) => {
    expect(parseVonageStatus(callEvent(status), at)).toMatchObject({ outcome: { type: 'progress' }, durationSec: 0 });
  });

  it('refuses a status that is neither a message nor a call, and an unknown call status', () => {
    expect(fieldOf(() => parseVonageStatus({ status: 'delivered' }, at))).toBe('uuid');
    expect(fieldOf(() => parseVonageStatus(callEvent('exploded'), at))).toBe('status');
    expect(fieldOf(() => parseVonageStatus(callEvent('toString'), at))).toBe('status');
  });
});
