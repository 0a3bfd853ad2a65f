/**
 * The Twilio adapter against Twilio's own OpenAPI description (served by Prism, with a fault
 * proxy of our own in front of it): every request the adapter sends must pass Prism's
 * validation, and the faults a real Twilio produces drive a breaker through the real adapter.
 */
import { CircuitBreaker, telephonyPolicy } from '@app/circuit-breaker';
import { TwilioProviderAdapter, type ProviderResult } from '@app/cpaas';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { TWILIO_API_SPEC, prismRefusal, startPrism, type PrismServer } from './support/prism';

const SID = 'AC' + '0123456789abcdef'.repeat(2);
const TOKEN = 'fe'.repeat(16);
const PUBLIC_URL = 'https://broker.example.com';
const PROXY = '+15005550001';
const OTHER = '+15005550006';

const twilioError = (status: number, code: number, message: string) => ({
  kind: 'answer' as const,
  status,
  body: JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }),
});

describe('Twilio adapter against Prism serving Twilio’s OpenAPI description', () => {
  let prism: PrismServer;
  let proxy: FaultProxy;
  let adapter: TwilioProviderAdapter;
  /** The same adapter with a short timeout, for the fault that never answers. */
  let impatient: TwilioProviderAdapter;

  beforeAll(async () => {
    prism = await startPrism(TWILIO_API_SPEC);
    proxy = await startFaultProxy(prism.url);
    const options = { name: 'primary', accountSid: SID, authToken: TOKEN, publicUrl: PUBLIC_URL, baseUrl: proxy.url };
    adapter = new TwilioProviderAdapter({ ...options, timeoutMs: 15_000 });
    impatient = new TwilioProviderAdapter({ ...options, timeoutMs: 300 });
  }, 120_000);
  afterAll(async () => {
    await adapter?.close();
    await impatient?.close();
    await proxy?.close();
    await prism?.close();
  });
  beforeEach(() => {
    proxy.exchanges.length = 0;
    proxy.always({ kind: 'pass' });
  });
  afterEach(() => {
    // A request Prism refused breaks Twilio's published contract: the test fails with Prism's words.
    expect(proxy.refusals(prismRefusal)).toEqual([]);
  });

  it('sends an SMS as a spec-valid Messages.json POST, from the proxy to the other participant, with a StatusCallback', async () => {
    const sent = await adapter.sendSms({ from: PROXY, to: OTHER, text: 'where are you?' });
    expect(sent).toMatchObject({ ok: true, value: { messageId: expect.stringMatching(/^SM/) } });
    expect(proxy.exchanges).toHaveLength(1);
    const [exchange] = proxy.exchanges;
    expect(exchange).toMatchObject({ method: 'POST', path: `/2010-04-01/Accounts/${SID}/Messages.json`, upstream: { status: 201 } });
    expect(exchange.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(exchange.headers.authorization).toBe(`Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(exchange.body))).toEqual({
      From: PROXY,
      To: OTHER,
      Body: 'where are you?',
      StatusCallback: `${PUBLIC_URL}/v1/providers/primary/status`,
    });
  });

  it('reads the account resource as its health check (the example account is active)', async () => {
    expect(await adapter.healthCheck()).toMatchObject({ ok: true });
    expect(proxy.exchanges.map((e) => `${e.method} ${e.path} ${e.upstream?.status}`)).toEqual([`GET /2010-04-01/Accounts/${SID}.json 200`]);
  });

  it('fails the health check of an account that is not active, and counts it', async () => {
    proxy.next({ kind: 'rewrite', body: (body) => body.replace('"status":"active"', '"status":"suspended"') });
    const result = await adapter.healthCheck();
    expect(result).toMatchObject({ ok: false, failure: { countsAgainstProvider: true, cause: 'rejected' } });
    expect(JSON.stringify(result)).toContain('suspended');
  });

  it('lists the account’s numbers and points one at the broker with spec-valid requests', async () => {
    const listed = await adapter.numbers.listNumbers();
    if (!listed.ok) throw new Error(listed.failure.reason);
    expect(listed.value).toEqual([expect.objectContaining({ id: expect.stringMatching(/^PN/), number: expect.stringMatching(/^\+\d+$/) })]);
    const webhooks = {
      smsUrl: `${PUBLIC_URL}/v1/providers/primary/inbound/sms`,
      voiceUrl: `${PUBLIC_URL}/v1/providers/primary/inbound/voice`,
      statusCallback: `${PUBLIC_URL}/v1/providers/primary/status`,
    };
    expect(await adapter.numbers.pointNumber(listed.value[0], webhooks)).toMatchObject({ ok: true });
    const update = proxy.exchanges[1];
    expect(update).toMatchObject({ method: 'POST', path: `/2010-04-01/Accounts/${SID}/IncomingPhoneNumbers/${listed.value[0].id}.json` });
    expect(Object.fromEntries(new URLSearchParams(update.body))).toMatchObject({
      SmsUrl: webhooks.smsUrl,
      VoiceUrl: webhooks.voiceUrl,
      StatusCallback: webhooks.statusCallback,
    });
  });

  it('follows next_page_uri through every page of numbers', async () => {
    // Prism answers one example page; the proxy makes the first one point at a second.
    proxy.next({
      kind: 'rewrite',
      body: (body) =>
        body
          .replace(
            '"next_page_uri":null',
            `"next_page_uri":"/2010-04-01/Accounts/${SID}/IncomingPhoneNumbers.json?PageSize=1000&Page=1&PageToken=PA1"`,
          )
          .replace(/"phone_number":"\+\d+"/, '"phone_number":"+18089255300"'),
    });
    const listed = await adapter.numbers.listNumbers();
    if (!listed.ok) throw new Error(listed.failure.reason);
    expect(listed.value.map((n) => n.number)).toEqual(['+18089255300', '+18089255327']);
    expect(proxy.exchanges.map((e) => e.path)).toEqual([
      `/2010-04-01/Accounts/${SID}/IncomingPhoneNumbers.json?PageSize=1000`,
      `/2010-04-01/Accounts/${SID}/IncomingPhoneNumbers.json?PageSize=1000&Page=1&PageToken=PA1`,
    ]);
  });

  describe('faults drive the breaker through the real adapter', () => {
    const send = (via = adapter) => via.sendSms({ from: PROXY, to: OTHER, text: 'hi' });
    /** What ProviderRegistry.call does with a result: a success, a counted failure, or nothing. */
    const feed = (breaker: CircuitBreaker, result: ProviderResult<unknown>): void => {
      if (result.ok) breaker.record({ kind: 'success', durationMs: result.latencyMs, probe: false });
      else if (result.failure.countsAgainstProvider) breaker.record({ kind: 'failure', reason: result.failure.reason, probe: false });
    };

    it('opens after 5 consecutive counted faults: 503, 429 with a Twilio body, reset, no answer, 2xx without a SID', async () => {
      const breaker = new CircuitBreaker(telephonyPolicy());
      const faults = [
        { kind: 'answer' as const, status: 503, body: '{"message":"Service Unavailable"}' },
        twilioError(429, 20429, 'Too Many Requests'),
        { kind: 'reset' as const },
        { kind: 'hang' as const },
        { kind: 'rewrite' as const, body: (body: string) => body.replace(/"sid":"SM[0-9a-zA-Z]+",?/, '') },
      ];
      const causes: string[] = [];
      for (const [i, fault] of faults.entries()) {
        expect(breaker.status().state).toBe('CLOSED');
        proxy.next(fault);
        const result = await send(fault.kind === 'hang' ? impatient : adapter);
        if (result.ok) throw new Error(`fault ${i} (${fault.kind}) was not a failure`);
        causes.push(`${result.failure.cause}:${result.failure.countsAgainstProvider}`);
        feed(breaker, result);
      }
      expect(causes).toEqual(['http-5xx:true', 'rate-limited:true', 'transport:true', 'timeout:true', 'rejected:true']);
      expect(breaker.status().state).toBe('OPEN');
      expect(breaker.status().lastError).not.toContain(TOKEN);
      breaker.dispose();
    }, 60_000);

    it('never opens on 400 with 21211 (invalid To), however many, and they do not break a run of counted faults', async () => {
      const breaker = new CircuitBreaker(telephonyPolicy());
      proxy.always(twilioError(400, 21211, "The 'To' number +1500 is not a valid phone number."));
      for (let i = 0; i < 12; i++) {
        const result = await send();
        expect(result).toMatchObject({
          ok: false,
          failure: { countsAgainstProvider: false, cause: 'invalid-number', vendorCode: '21211' },
        });
        feed(breaker, result);
      }
      expect(breaker.status().state).toBe('CLOSED');
      proxy.always({ kind: 'answer', status: 503, body: '{}' });
      for (let i = 0; i < 4; i++) feed(breaker, await send());
      proxy.always(twilioError(400, 21211, 'invalid'));
      feed(breaker, await send());
      expect(breaker.status().state).toBe('CLOSED');
      proxy.always({ kind: 'answer', status: 503, body: '{}' });
      feed(breaker, await send());
      expect(breaker.status().state).toBe('OPEN');
      breaker.dispose();
    }, 60_000);
  });
});
