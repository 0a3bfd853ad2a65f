/**
 * Africa's Talking's webhooks: the token in the URL (the vendor signs nothing), the voice callback
 * (a call to answer, and its end on the same URL, routed as a status), delivery reports and inbound
 * SMS, read strictly.
 */
import { isInvalidWebhookError } from '../errors';
import type { WebhookRequest, WebhookRoute } from '../provider';
import { AfricasTalkingProviderAdapter } from './africastalking-provider.adapter';

const TOKEN = 'a1b2c3d4'.repeat(5);
const adapter = new AfricasTalkingProviderAdapter({
  name: 'primary',
  username: 'lagos',
  apiKey: 'k'.repeat(32),
  webhookToken: TOKEN,
  publicUrl: 'https://broker.example.com',
  timeoutMs: 1_000,
  clock: { now: () => Date.parse('2026-07-15T12:00:00Z') },
});
afterAll(() => adapter.close());

function webhook(route: WebhookRoute, params: Record<string, string>, query = `?token=${TOKEN}`): WebhookRequest {
  return {
    url: `https://broker.example.com/v1/providers/primary/${route}${query}`,
    method: 'POST',
    route,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    rawBody: Buffer.from(new URLSearchParams(params).toString()),
  };
}

const call = {
  isActive: '1',
  sessionId: 'ATVId_7f3',
  direction: 'Inbound',
  callerNumber: '+2348031234567',
  destinationNumber: '+2349010000001',
};

function fieldOf(read: () => unknown): string | undefined {
  try {
    read();
  } catch (error) {
    if (isInvalidWebhookError(error)) return error.field;
    throw error;
  }
  throw new Error('expected an invalid webhook');
}

describe("Africa's Talking webhook token", () => {
  it('the right token is valid; none is missing (401); another, an empty or a doubled one is invalid (403)', () => {
    expect(adapter.verifyWebhook(webhook('inbound/voice', call))).toBe('valid');
    expect(adapter.verifyWebhook(webhook('inbound/voice', call, ''))).toBe('missing');
    expect(adapter.verifyWebhook(webhook('inbound/voice', call, '?token='))).toBe('missing');
    expect(adapter.verifyWebhook(webhook('inbound/voice', call, `?token=${TOKEN.slice(0, -1)}x`))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook('inbound/voice', call, `?token=${TOKEN}x`))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook('inbound/voice', call, `?token=${TOKEN}&token=${TOKEN}`))).toBe('invalid');
  });

  it('the URLs to register carry the token', () => {
    expect(adapter.webhooks.voiceUrl).toBe(`https://broker.example.com/v1/providers/primary/inbound/voice?token=${TOKEN}`);
    expect(adapter.webhooks.statusCallback).toBe(`https://broker.example.com/v1/providers/primary/status?token=${TOKEN}`);
  });
});

describe("Africa's Talking voice callback", () => {
  it('isActive=1 is a call to answer, keyed by its sessionId', () => {
    const req = webhook('inbound/voice', call);
    expect(adapter.webhookRoute(req)).toBe('inbound/voice');
    expect(adapter.parseInbound('voice', req)).toEqual({
      channel: 'voice',
      eventId: 'ATVId_7f3',
      callId: 'ATVId_7f3',
      from: '+2348031234567',
      to: '+2349010000001',
      at: '2026-07-15T12:00:00.000Z',
    });
  });

  it('isActive=0 on the same URL is the end of the call, routed as a status', () => {
    const req = webhook('inbound/voice', {
      ...call,
      isActive: '0',
      durationInSeconds: '41',
      dialDestinationNumber: '+2348039876543',
      dialDurationInSeconds: '35',
      hangupCause: 'NORMAL_CLEARING',
    });
    expect(adapter.webhookRoute(req)).toBe('status');
    expect(adapter.parseStatus(req)).toMatchObject({
      type: 'call.completed',
      eventId: 'ATVId_7f3:end',
      callId: 'ATVId_7f3',
      answer: 'completed',
      durationSec: 35,
    });
  });

  it('the end of a call that never dialled (an out-of-session answer) reports nothing', () => {
    expect(adapter.parseStatus(webhook('inbound/voice', { ...call, isActive: '0', hangupCause: 'NORMAL_CLEARING' }))).toMatchObject({
      type: 'call.progress',
    });
  });

  it('a busy callee is a success; a vendor-side cause is a set-up failure', () => {
    const ended = (cause: string) =>
      webhook('inbound/voice', { ...call, isActive: '0', dialDestinationNumber: '+2348039876543', hangupCause: cause });
    expect(adapter.parseStatus(ended('USER_BUSY'))).toMatchObject({ type: 'call.completed', answer: 'busy' });
    expect(adapter.parseStatus(ended('SERVICE_UNAVAILABLE'))).toMatchObject({
      type: 'call.failed',
      reason: expect.stringContaining('SERVICE_UNAVAILABLE'),
    });
  });

  it('bodies that are not Africa’s Talking’s name the field', () => {
    expect(fieldOf(() => adapter.parseInbound('voice', webhook('inbound/voice', { ...call, callerNumber: '0803 123' })))).toBe(
      'callerNumber',
    );
    expect(fieldOf(() => adapter.parseInbound('voice', webhook('inbound/voice', { ...call, sessionId: '<x>' })))).toBe('sessionId');
    expect(fieldOf(() => adapter.parseInbound('voice', webhook('inbound/voice', { ...call, isActive: '2' })))).toBe('isActive');
    const noCause = webhook('inbound/voice', { ...call, isActive: '0', dialDestinationNumber: '+2348039876543' });
    expect(fieldOf(() => adapter.parseStatus(noCause))).toBe('hangupCause');
  });

  it('answers a call with no session by refusing it', () => {
    expect(adapter.noSessionAnswer('voice').body).toContain('<Reject/>');
  });
});

describe("Africa's Talking SMS webhooks", () => {
  it('an inbound SMS (numbers that can receive: shortcodes) is read', () => {
    const req = webhook('inbound/sms', {
      from: '+2348031234567',
      to: '+2349010000001',
      text: 'Where are you?',
      id: 'b1c2',
      date: '2026-07-15 11:59:00',
      linkId: 'l1',
    });
    expect(adapter.parseInbound('sms', req)).toMatchObject({
      channel: 'sms',
      messageId: 'b1c2',
      from: '+2348031234567',
      text: 'Where are you?',
    });
  });

  it('delivery reports: Success delivered, Failed undelivered with the reason, Rejected failed, Sent progress', () => {
    const report = (status: string, failureReason?: string) =>
      adapter.parseStatus(
        webhook('status', {
          id: 'ATXid_1',
          status,
          phoneNumber: '+2348031234567',
          networkCode: '62130',
          ...(failureReason ? { failureReason } : {}),
        }),
      );
    expect(report('Success')).toMatchObject({ type: 'message.delivered', messageId: 'ATXid_1', eventId: 'ATXid_1:Success' });
    expect(report('Failed', 'DeliveryFailure')).toMatchObject({ type: 'message.undelivered', errorCode: 'DeliveryFailure' });
    expect(report('Rejected', 'DoNotDisturbRejection')).toMatchObject({ type: 'message.failed', errorCode: 'DoNotDisturbRejection' });
    expect(report('Sent')).toMatchObject({ type: 'message.progress' });
    expect(fieldOf(() => report('Teleported'))).toBe('status');
  });
});
