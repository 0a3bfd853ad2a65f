import { InvalidWebhookError } from '../errors';
import { parseSimInbound, parseSimStatus } from './sim-webhooks';

const sms = {
  eventId: 'evt_1',
  messageId: 'msg_1',
  from: '+2348030000001',
  to: '+2348090000001',
  text: 'hi',
  at: '2026-07-15T12:00:00.000Z',
};

describe('sim webhook bodies', () => {
  it('reads an inbound SMS from parsed JSON or raw bytes', () => {
    expect(parseSimInbound('sms', sms)).toEqual({ channel: 'sms', ...sms });
    expect(parseSimInbound('sms', Buffer.from(JSON.stringify(sms)))).toEqual({ channel: 'sms', ...sms });
  });

  it.each([
    ['not JSON', Buffer.from('{'), undefined],
    ['an array', [], undefined],
    ['a bad number', { ...sms, from: '0803' }, 'from'],
    ['a missing id', { ...sms, messageId: undefined }, 'messageId'],
    ['a bad timestamp', { ...sms, at: 'yesterday' }, 'at'],
  ])('refuses %s with InvalidWebhookError', (_, body, field) => {
    expect(() => parseSimInbound('sms', body)).toThrow(InvalidWebhookError);
    try {
      parseSimInbound('sms', body);
    } catch (error) {
      expect((error as InvalidWebhookError).field).toBe(field);
    }
  });

  it('reads status events and refuses unknown ones', () => {
    const completed = {
      type: 'call.completed',
      eventId: 'e',
      callId: 'c',
      from: sms.from,
      to: sms.to,
      answer: 'no-answer',
      durationSec: 0,
      at: sms.at,
    };
    expect(parseSimStatus(completed)).toEqual(completed);
    expect(() => parseSimStatus({ ...completed, answer: 'maybe' })).toThrow(InvalidWebhookError);
    expect(() => parseSimStatus({ ...completed, type: 'call.started' })).toThrow(InvalidWebhookError);
  });
});
