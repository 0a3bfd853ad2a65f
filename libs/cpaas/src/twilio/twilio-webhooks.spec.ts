/**
 * Twilio's webhooks checked with material from Twilio's own package: test vectors signed with
 * `twilio.getExpectedTwilioSignature` must be accepted, and a changed parameter, URL or header
 * refused; the TwiML the adapter answers is compared, as parsed XML, with what
 * `twilio.twiml.VoiceResponse` / `MessagingResponse` make for the same instruction.
 */
import { XMLParser } from 'fast-xml-parser';
import twilio from 'twilio';
import { isInvalidWebhookError } from '../errors';
import type { WebhookRequest, WebhookRoute } from '../provider';
import { TwilioProviderAdapter } from './twilio-provider.adapter';

const SID = 'AC' + '12'.repeat(16);
const TOKEN = '9f'.repeat(16);
const PUBLIC_URL = 'https://broker.example.com';
const CALLER = '+2348030000001';
const OTHER = '+2348030000002';
const PROXY = '+2348090000001';
const MESSAGE_SID = 'SM' + 'a1'.repeat(16);
const CALL_SID = 'CA' + 'b2'.repeat(16);
const DIAL_SID = 'CA' + 'c3'.repeat(16);
const NOW = Date.parse('2026-07-15T12:00:00Z');

const adapter = new TwilioProviderAdapter({
  name: 'primary',
  accountSid: SID,
  authToken: TOKEN,
  publicUrl: PUBLIC_URL,
  baseUrl: 'http://127.0.0.1:9',
  timeoutMs: 100,
  clock: { now: () => NOW },
});
afterAll(() => adapter.close());

/** A webhook as Twilio sends it: form-encoded, signed by Twilio's own helper over the public URL. */
function signed(route: WebhookRoute, params: Record<string, string>, options: { url?: string; token?: string } = {}): WebhookRequest {
  const url = options.url ?? `${PUBLIC_URL}/v1/providers/primary/${route}`;
  const signature = twilio.getExpectedTwilioSignature(options.token ?? TOKEN, url, params);
  return {
    url,
    method: 'POST',
    route,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    rawBody: Buffer.from(new URLSearchParams(params).toString()),
  };
}

const inboundSms = {
  AccountSid: SID,
  MessageSid: MESSAGE_SID,
  SmsSid: MESSAGE_SID,
  From: CALLER,
  To: PROXY,
  Body: 'where are you?',
  NumMedia: '0',
};
const inboundCall = { AccountSid: SID, CallSid: CALL_SID, From: CALLER, To: PROXY, CallStatus: 'ringing', Direction: 'inbound' };

describe('Twilio webhook signatures (twilio.getExpectedTwilioSignature vectors)', () => {
  it('accepts a webhook signed by Twilio over PUBLIC_URL + path + query', () => {
    expect(adapter.verifyWebhook(signed('inbound/sms', inboundSms))).toBe('valid');
    expect(adapter.verifyWebhook(signed('inbound/voice', inboundCall))).toBe('valid');
    expect(adapter.verifyWebhook(signed('status', inboundSms, { url: `${PUBLIC_URL}/v1/providers/primary/status?attempt=2` }))).toBe(
      'valid',
    );
  });

  it('says missing without the header, and invalid for a changed parameter, URL, header or token', () => {
    const good = signed('inbound/sms', inboundSms);
    expect(adapter.verifyWebhook({ ...good, headers: { 'content-type': 'application/x-www-form-urlencoded' } })).toBe('missing');
    expect(adapter.verifyWebhook({ ...good, headers: { 'x-twilio-signature': '' } })).toBe('missing');
    const changedBody = Buffer.from(new URLSearchParams({ ...inboundSms, Body: 'where are you!' }).toString());
    expect(adapter.verifyWebhook({ ...good, rawBody: changedBody })).toBe('invalid');
    const addedParam = Buffer.from(new URLSearchParams({ ...inboundSms, Extra: '1' }).toString());
    expect(adapter.verifyWebhook({ ...good, rawBody: addedParam })).toBe('invalid');
    expect(adapter.verifyWebhook({ ...good, url: `${PUBLIC_URL}/v1/providers/failover/inbound/sms` })).toBe('invalid');
    expect(adapter.verifyWebhook({ ...good, url: `${PUBLIC_URL}/v1/providers/primary/inbound/voice` })).toBe('invalid');
    expect(adapter.verifyWebhook({ ...good, url: `https://elsewhere.example.com/v1/providers/primary/inbound/sms` })).toBe('invalid');
    expect(adapter.verifyWebhook({ ...good, headers: { 'x-twilio-signature': 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' } })).toBe('invalid');
    expect(adapter.verifyWebhook(signed('inbound/sms', inboundSms, { token: 'ab'.repeat(16) }))).toBe('invalid');
  });
});

describe('Twilio webhook bodies', () => {
  it('reads an inbound SMS and call; the MessageSid / CallSid is the event id, so a retry is relayed once', () => {
    expect(adapter.parseInbound('sms', signed('inbound/sms', inboundSms))).toEqual({
      channel: 'sms',
      eventId: MESSAGE_SID,
      messageId: MESSAGE_SID,
      from: CALLER,
      to: PROXY,
      text: 'where are you?',
      at: new Date(NOW).toISOString(),
    });
    expect(adapter.parseInbound('voice', signed('inbound/voice', inboundCall))).toEqual({
      channel: 'voice',
      eventId: CALL_SID,
      callId: CALL_SID,
      from: CALLER,
      to: PROXY,
      at: new Date(NOW).toISOString(),
    });
  });

  it.each([
    ['missing From', { ...inboundSms, From: undefined }, 'From'],
    ['a From that is not E.164', { ...inboundSms, From: '08030000001' }, 'From'],
    ['missing To', { ...inboundSms, To: undefined }, 'To'],
    ['a MessageSid that is not one', { ...inboundSms, MessageSid: 'nope' }, 'MessageSid'],
    ['another account', { ...inboundSms, AccountSid: 'AC' + '00'.repeat(16) }, 'AccountSid'],
    ['a Body over 1600 characters', { ...inboundSms, Body: 'x'.repeat(1601) }, 'Body'],
  ])('refuses an inbound SMS with %s, naming the field', (_name, params, field) => {
    const clean = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Record<string, string>;
    try {
      adapter.parseInbound('sms', signed('inbound/sms', clean));
      throw new Error('accepted');
    } catch (error) {
      expect(isInvalidWebhookError(error)).toBe(true);
      expect((error as { field?: string }).field).toBe(field);
    }
  });

  it('accepts a Body of exactly 1600 characters', () => {
    expect(adapter.parseInbound('sms', signed('inbound/sms', { ...inboundSms, Body: 'x'.repeat(1600) }))).toMatchObject({
      text: 'x'.repeat(1600),
    });
  });

  const status = (params: Record<string, string>) => adapter.parseStatus(signed('status', { AccountSid: SID, ...params }));
  const messageStatus = (MessageStatus: string, extra: Record<string, string> = {}) =>
    status({ MessageSid: MESSAGE_SID, MessageStatus, From: PROXY, To: OTHER, ...extra });

  it('reads message status callbacks: delivered, undelivered and failed with the error code, the rest as progress', () => {
    expect(messageStatus('delivered')).toMatchObject({
      type: 'message.delivered',
      messageId: MESSAGE_SID,
      eventId: `${MESSAGE_SID}:delivered`,
    });
    expect(messageStatus('undelivered', { ErrorCode: '30003' })).toMatchObject({ type: 'message.undelivered', errorCode: '30003' });
    expect(messageStatus('failed', { ErrorCode: '30008' })).toMatchObject({ type: 'message.failed', errorCode: '30008' });
    for (const s of ['queued', 'sending', 'sent', 'accepted'])
      expect(messageStatus(s)).toMatchObject({ type: 'message.progress', status: s });
    expect(() => messageStatus('exploded')).toThrow(/MessageStatus/);
  });

  it.each([
    ['completed', { type: 'call.completed', answer: 'completed', durationSec: 42 }],
    ['answered', { type: 'call.completed', answer: 'completed', durationSec: 42 }],
    ['busy', { type: 'call.completed', answer: 'busy' }],
    ['no-answer', { type: 'call.completed', answer: 'no-answer' }],
    ['canceled', { type: 'call.completed', answer: 'canceled' }],
    ['failed', { type: 'call.failed' }],
  ])('reads DialCallStatus=%s of a <Dial action> callback', (dialStatus, expected) => {
    const event = status({
      CallSid: CALL_SID,
      DialCallSid: DIAL_SID,
      DialCallStatus: dialStatus,
      DialCallDuration: '42',
      From: CALLER,
      To: PROXY,
    });
    expect(event).toMatchObject({ ...expected, callId: CALL_SID, bridgedCallId: DIAL_SID, eventId: `${CALL_SID}:dial` });
  });
});

describe('TwiML answers, compared with the twilio package as parsed XML', () => {
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' });
  const same = (ours: string, theirs: { toString(): string }) => expect(xml.parse(ours)).toEqual(xml.parse(theirs.toString()));

  it('bridges an inbound call to the other participant, showing the proxy, with the dial outcome posted to /status', () => {
    const answer = adapter.voiceBridgeInstruction({ to: OTHER, callerId: PROXY });
    expect(answer).toMatchObject({ status: 200, contentType: 'text/xml' });
    const twiml = new twilio.twiml.VoiceResponse();
    twiml.dial({ callerId: PROXY, action: `${PUBLIC_URL}/v1/providers/primary/status`, method: 'POST' }).number(OTHER);
    same(answer.body, twiml);
  });

  it('says the out-of-session text and hangs up; rejects when the answer is reject', () => {
    const say = new twilio.twiml.VoiceResponse();
    say.say('This number is not in use. <Goodbye> & "thanks"');
    say.hangup();
    same(adapter.voiceSayInstruction({ text: 'This number is not in use. <Goodbye> & "thanks"' }).body, say);
    const reject = new twilio.twiml.VoiceResponse();
    reject.reject();
    same(adapter.noSessionAnswer('voice').body, reject);
  });

  it('replies to an out-of-session SMS inline, and answers everything else with an empty response', () => {
    const reply = new twilio.twiml.MessagingResponse();
    reply.message('Ce numéro n’est plus actif & <merci>');
    same(adapter.smsAnswer({ kind: 'out-of-session', reply: 'Ce numéro n’est plus actif & <merci>' }).body, reply);
    const empty = new twilio.twiml.MessagingResponse();
    same(adapter.smsAnswer({ kind: 'relayed', interactionId: 'i' }).body, empty);
    same(adapter.noSessionAnswer('sms').body, empty);
    same(adapter.statusAnswer().body, new twilio.twiml.VoiceResponse());
  });
});
