/**
 * The Infobip outcome tables, row by row, through the real adapter: a local server answers each
 * row (an HTTP status with Infobip's error body, or a 200 whose message status is the row's
 * REJECTED name), and the adapter's failure must say what the row says. The dialog endings through
 * the event parser.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderResult } from '../provider';
import { INFOBIP_DIALOG_ENDINGS, INFOBIP_HTTP_RULES, INFOBIP_REJECTED_RULES } from './infobip-outcomes';
import { InfobipProviderAdapter } from './infobip-provider.adapter';
import { parseInfobipStatus } from './infobip-webhooks';

const sms = { from: '+2349020000001', to: '+2348031234567', text: 'hello' };
const rejected = (name: string) => ({
  status: 200,
  body: JSON.stringify({ messages: [{ messageId: 'm1', status: { groupId: 5, groupName: 'REJECTED', id: 6, name } }] }),
});

describe('Infobip outcome tables', () => {
  let server: Server;
  let answer: { status: number; body: string };
  let adapter: InfobipProviderAdapter;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    adapter = new InfobipProviderAdapter({
      name: 'failover',
      apiKey: 'a'.repeat(32) + '-key',
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

  it.each(INFOBIP_HTTP_RULES.map((rule) => [rule.key, rule] as const))('%s', async (key, rule) => {
    const status = key === 'HTTP 5xx' ? 503 : key === 'HTTP 4xx' ? 404 : Number(key.slice(5));
    answer = { status, body: JSON.stringify({ errorCode: `E${status}`, description: 'Refused', violations: [] }) };
    const failure = failureOf(await adapter.sendSms(sms));
    expect(failure).toMatchObject({ countsAgainstProvider: rule.countsAgainstProvider, cause: rule.cause, status });
    expect(failure.reason).toContain(`E${status}: Refused`);
  });

  it('the older error body (requestError.serviceException) is quoted too', async () => {
    answer = {
      status: 401,
      body: JSON.stringify({ requestError: { serviceException: { messageId: 'UNAUTHORIZED', text: 'Invalid login details' } } }),
    };
    expect(failureOf(await adapter.healthCheck()).reason).toContain('UNAUTHORIZED: Invalid login details');
  });

  it.each(INFOBIP_REJECTED_RULES.map((rule) => [rule.key, rule.countsAgainstProvider ? 'counted' : 'not counted', rule] as const))(
    'message status %s: %s',
    async (key, _counted, rule) => {
      answer = rejected(key);
      expect(failureOf(await adapter.sendSms(sms))).toMatchObject({
        countsAgainstProvider: rule.countsAgainstProvider,
        cause: rule.cause,
        vendorCode: key,
      });
    },
  );

  it('an unknown rejection counts; a 200 without a messageId is a counted rejection; non-JSON is malformed', async () => {
    answer = rejected('REJECTED_SOMETHING_NEW');
    expect(failureOf(await adapter.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
    answer = { status: 200, body: JSON.stringify({ messages: [{ status: { groupName: 'PENDING' } }] }) };
    expect(failureOf(await adapter.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
    answer = { status: 200, body: 'ok' };
    expect(failureOf(await adapter.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'malformed' });
  });

  it('a dialog answer without an id is a counted rejection', async () => {
    answer = { status: 201, body: JSON.stringify({ state: 'CREATED' }) };
    expect(failureOf(await adapter.bridgeCall({ from: sms.from, to: sms.to, inboundCallId: 'c1' }))).toMatchObject({
      countsAgainstProvider: true,
      cause: 'rejected',
    });
  });

  it('health: a positive balance passes; zero fails, counted', async () => {
    answer = { status: 200, body: JSON.stringify({ balance: 12.5, currency: 'NGN' }) };
    expect((await adapter.healthCheck()).ok).toBe(true);
    answer = { status: 200, body: JSON.stringify({ balance: 0, currency: 'NGN' }) };
    expect(failureOf(await adapter.healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
  });

  const ended = (type: 'DIALOG_FINISHED' | 'DIALOG_FAILED', name: string) =>
    Buffer.from(
      JSON.stringify({
        type,
        dialogId: 'd1',
        properties: {
          dialog: {
            id: 'd1',
            establishTime: '2026-07-15T12:00:10.000+0000',
            endTime: '2026-07-15T12:01:00.000+0000',
            parentCall: { id: 'c-in', from: '2348031234567', to: '2349020000001' },
            childCall: { id: 'c-out', from: '2349020000001', to: '2348039876543' },
          },
          errorCode: { id: 1, name },
        },
      }),
    );

  it.each(Object.entries(INFOBIP_DIALOG_ENDINGS))('dialog ending %s → %s', (name, expected) => {
    const event = parseInfobipStatus(
      ended(name === 'NORMAL_HANGUP' ? 'DIALOG_FINISHED' : 'DIALOG_FAILED', name),
      '2026-07-15T12:02:00.000Z',
    );
    if (expected === null) expect(event).toMatchObject({ type: 'call.failed', callId: 'c-in', bridgedCallId: 'c-out' });
    else expect(event).toMatchObject({ type: 'call.completed', callId: 'c-in', answer: expected, to: '+2348039876543' });
  });

  it('an unknown ending is a set-up failure', () => {
    expect(parseInfobipStatus(ended('DIALOG_FAILED', 'NEW_CODE'), '2026-07-15T12:02:00.000Z')).toMatchObject({ type: 'call.failed' });
  });
});
