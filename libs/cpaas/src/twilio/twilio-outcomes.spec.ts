/**
 * The outcome table, row by row, through the real adapter: a local server answers each row's
 * HTTP status with Twilio's error body, and the adapter's failure must say what the row says.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderResult } from '../provider';
import { TWILIO_OTHER_OUTCOMES, TWILIO_OUTCOMES, twilioOutcome, type TwilioOutcomeRule } from './twilio-outcomes';
import { TwilioProviderAdapter } from './twilio-provider.adapter';

const SID = 'AC' + 'ab'.repeat(16);
const TOKEN = 'c0ffee'.repeat(5) + 'aa';
const OPTIONS = { name: 'primary', accountSid: SID, authToken: TOKEN, publicUrl: 'https://broker.example.com', timeoutMs: 2_000 };

/** The HTTP status a row is tried with: its own, a representative of its class, or the code's usual one. */
function statusOf(rule: TwilioOutcomeRule): number {
  if (typeof rule.status === 'number') return rule.status;
  if (rule.status === '5xx') return 503;
  if (rule.status === '4xx') return 403;
  return rule.code === 20429 || rule.code === 14107 ? 429 : rule.code === 20003 ? 401 : rule.code === 20404 ? 404 : 400;
}

describe('Twilio outcome table', () => {
  let server: Server;
  let answer: { status: number; body: string };
  let adapter: TwilioProviderAdapter;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    adapter = new TwilioProviderAdapter({
      name: 'primary',
      accountSid: SID,
      authToken: TOKEN,
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

  it.each(
    TWILIO_OUTCOMES.map(
      (rule) =>
        [
          rule.code === null ? `HTTP ${String(rule.status)}` : `Twilio ${rule.code}`,
          `${rule.countsAgainstProvider ? 'counts against the provider' : "the customer's input, not counted"} (${rule.cause})`,
          rule,
        ] as const,
    ),
  )('%s: %s', async (_name, _verdict, rule) => {
    const status = statusOf(rule);
    answer = {
      status,
      body: JSON.stringify(
        rule.code === null
          ? { message: 'x', status }
          : { code: rule.code, message: rule.meaning, more_info: `https://www.twilio.com/docs/errors/${rule.code}`, status },
      ),
    };
    const failure = failureOf(await adapter.sendSms({ from: '+15005550001', to: '+15005550006', text: 'hi' }));
    expect(failure).toMatchObject({ countsAgainstProvider: rule.countsAgainstProvider, cause: rule.cause, status });
    expect(twilioOutcome(status, rule.code ?? undefined)).toBe(rule);
    expect(failure.reason).not.toContain(TOKEN);
  });

  it('looks up the code before the status, and the class last', () => {
    expect(twilioOutcome(429, 20429).code).toBe(20429);
    expect(twilioOutcome(400, 21211).countsAgainstProvider).toBe(false);
    expect(twilioOutcome(400, 99999)).toMatchObject({ status: 400, countsAgainstProvider: false });
    expect(twilioOutcome(404, undefined)).toMatchObject({ status: '4xx', countsAgainstProvider: true });
    expect(twilioOutcome(502, 20500)).toMatchObject({ status: '5xx', countsAgainstProvider: true });
  });

  it.each(TWILIO_OTHER_OUTCOMES.map((row) => [row.outcome, row] as const))('%s', async (_name, row) => {
    let result: ProviderResult<unknown>;
    if (row.cause === 'rejected') {
      answer = { status: 201, body: JSON.stringify({ status: 'queued' }) };
      result = await adapter.sendSms({ from: '+15005550001', to: '+15005550006', text: 'hi' });
      answer = { status: 200, body: JSON.stringify({ sid: SID, status: 'suspended' }) };
      expect(failureOf(await adapter.healthCheck())).toMatchObject({ cause: 'rejected', countsAgainstProvider: true });
    } else if (row.cause === 'malformed') {
      answer = { status: 201, body: '<html>' };
      result = await adapter.sendSms({ from: '+15005550001', to: '+15005550006', text: 'hi' });
    } else if (row.cause === 'timeout') {
      const hanging = createServer(() => undefined);
      await new Promise<void>((done) => hanging.listen(0, '127.0.0.1', done));
      const hung = new TwilioProviderAdapter({
        ...OPTIONS,
        baseUrl: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`,
        timeoutMs: 50,
      });
      result = await hung.healthCheck();
      await hung.close();
      hanging.closeAllConnections();
      await new Promise((done) => hanging.close(done));
    } else {
      const closed = createServer();
      await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((done) => closed.close(done));
      const refused = new TwilioProviderAdapter({ ...OPTIONS, baseUrl: `http://127.0.0.1:${port}` });
      result = await refused.healthCheck();
      await refused.close();
    }
    expect(failureOf(result)).toMatchObject({ cause: row.cause, countsAgainstProvider: row.countsAgainstProvider });
  });
});
