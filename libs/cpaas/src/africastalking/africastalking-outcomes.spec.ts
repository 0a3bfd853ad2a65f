/**
 * The Africa's Talking outcome tables, row by row, through the real adapter: a local server answers
 * each row (a 201 whose recipient has the row's status code, or the row's HTTP status), and the
 * adapter's failure must say what the row says. The hangup-cause table through the end-of-call parser.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderResult } from '../provider';
import {
  AFRICASTALKING_ACCEPTED_CODES,
  AFRICASTALKING_HANGUP_CAUSES,
  AFRICASTALKING_HTTP_RULES,
  AFRICASTALKING_RECIPIENT_RULES,
} from './africastalking-outcomes';
import { AfricasTalkingProviderAdapter } from './africastalking-provider.adapter';
import { parseAfricasTalkingStatus } from './africastalking-webhooks';

const sms = { from: '+2349010000001', to: '+2348031234567', text: 'hello' };
const recipients = (statusCode: number, messageId = 'ATXid_9') => ({
  status: 201,
  body: JSON.stringify({ SMSMessageData: { Message: 'x', Recipients: [{ statusCode, number: sms.to, messageId }] } }),
});

describe("Africa's Talking outcome tables", () => {
  let server: Server;
  let answer: { status: number; body: string };
  let adapter: AfricasTalkingProviderAdapter;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    adapter = new AfricasTalkingProviderAdapter({
      name: 'primary',
      username: 'lagos',
      apiKey: 'k'.repeat(32),
      webhookToken: 't'.repeat(32),
      publicUrl: 'https://broker.example.com',
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      timeoutMs: 2_000,
    });
  });
  afterAll(async () => {
    await adapter.close();
    await new Promise((done) => server.close(done));
  });

  const failureOf = (result: ProviderResult<unknown>) => {
    if (result.ok) throw new Error('expected a failure');
    return result.failure;
  };

  it.each(AFRICASTALKING_ACCEPTED_CODES.map((code) => [code]))('recipient status %d is a sent message', async (code) => {
    answer = recipients(code);
    expect(await adapter.sendSms(sms)).toMatchObject({ ok: true, value: { messageId: 'ATXid_9' } });
  });

  it.each(AFRICASTALKING_RECIPIENT_RULES.map((rule) => [rule.key, rule.countsAgainstProvider ? 'counted' : 'not counted', rule] as const))(
    'recipient status %s: %s',
    async (_key, _counted, rule) => {
      answer = recipients(Number(rule.key));
      const failure = failureOf(await adapter.sendSms(sms));
      expect(failure).toMatchObject({ countsAgainstProvider: rule.countsAgainstProvider, cause: rule.cause, vendorCode: rule.key });
      expect(failure.reason).toContain(`recipient status ${rule.key}`);
    },
  );

  it('an unknown recipient status counts', async () => {
    answer = recipients(499);
    expect(failureOf(await adapter.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
  });

  it.each(AFRICASTALKING_HTTP_RULES.map((rule) => [rule.key, rule] as const))('%s', async (key, rule) => {
    const status = key === 'HTTP 5xx' ? 503 : key === 'HTTP 4xx' ? 404 : Number(key.slice(5));
    answer = { status, body: 'The supplied authentication is invalid' };
    const failure = failureOf(await adapter.sendSms(sms));
    expect(failure).toMatchObject({ countsAgainstProvider: rule.countsAgainstProvider, cause: rule.cause, status });
  });

  it('a 201 without a recipient, or without a messageId, is a counted rejection; a body that is not JSON is malformed', async () => {
    answer = { status: 201, body: JSON.stringify({ SMSMessageData: { Message: 'InvalidSenderId', Recipients: [] } }) };
    expect(failureOf(await adapter.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
    answer = recipients(101, 'None');
    expect(failureOf(await adapter.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
    answer = { status: 201, body: '<html>' };
    expect(failureOf(await adapter.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'malformed' });
  });

  it('the health check passes on a positive balance and fails, counted, on an empty one', async () => {
    answer = { status: 200, body: JSON.stringify({ UserData: { balance: 'NGN 1500.25' } }) };
    expect((await adapter.healthCheck()).ok).toBe(true);
    answer = { status: 200, body: JSON.stringify({ UserData: { balance: 'NGN 0.0000' } }) };
    expect(failureOf(await adapter.healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
    answer = { status: 401, body: 'The supplied authentication is invalid' };
    expect(failureOf(await adapter.healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'auth' });
  });

  it('a reason never carries the API key', async () => {
    answer = { status: 401, body: 'nope' };
    expect(failureOf(await adapter.sendSms(sms)).reason).not.toContain('k'.repeat(32));
  });

  const end = (cause: string) => ({
    isActive: '0',
    sessionId: 'ATVId_42',
    direction: 'Inbound',
    callerNumber: '+2348031234567',
    destinationNumber: '+2349010000001',
    dialDestinationNumber: '+2348039876543',
    dialDurationInSeconds: '37',
    hangupCause: 'NORMAL_CLEARING',
    lastBridgeHangupCause: cause,
  });

  it.each(Object.entries(AFRICASTALKING_HANGUP_CAUSES))('hangup cause %s → %s', (cause, expected) => {
    const event = parseAfricasTalkingStatus(end(cause), '2026-07-15T12:00:00.000Z');
    if (expected === null) expect(event).toMatchObject({ type: 'call.failed', callId: 'ATVId_42', to: '+2348039876543' });
    else expect(event).toMatchObject({ type: 'call.completed', callId: 'ATVId_42', answer: expected, durationSec: 37 });
  });

  it('an unknown hangup cause is a set-up failure', () => {
    expect(parseAfricasTalkingStatus(end('SOMETHING_NEW'), '2026-07-15T12:00:00.000Z')).toMatchObject({ type: 'call.failed' });
  });
});
