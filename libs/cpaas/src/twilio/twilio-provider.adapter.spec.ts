/**
 * The Twilio adapter against a loopback stand-in for Twilio's API: every operation sends the
 * request Twilio's description (twilio_api_v2010.json) asks for, and every kind of answer comes back
 * as the result a caller sees (TWILIO_OUTCOMES for the HTTP errors). test/twilio-adapter.e2e-spec.ts
 * checks the same requests against Prism serving that description.
 */
import type { CpaasProvider } from '../provider';
import { failureOf as failure, itCountsTransportFailures } from '../testing/transport-outcomes';
import { jsonAnswer, startVendorStandIn, type VendorStandIn } from '../testing/vendor-stand-in';
import { TwilioProviderAdapter } from './twilio-provider.adapter';

const SID = 'AC' + '0123456789abcdef'.repeat(2);
const TOKEN = 'fe'.repeat(16);
const BASIC = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;
const PUBLIC_URL = 'https://broker.example.com';
const PROXY = '+15005550001';
const OTHER = '+15005550006';
const ACCOUNT = `/2010-04-01/Accounts/${SID}`;
const SMS = { from: PROXY, to: OTHER, text: 'where are you?' };

const twilioError = (status: number, code: number, message: string) =>
  jsonAnswer(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

const twilioAdapter = (baseUrl: string, timeoutMs = 2_000) =>
  new TwilioProviderAdapter({ name: 'primary', accountSid: SID, authToken: TOKEN, publicUrl: PUBLIC_URL, baseUrl, timeoutMs });

describe('TwilioProviderAdapter against a loopback Twilio', () => {
  let twilio: VendorStandIn;
  let adapter: TwilioProviderAdapter;

  beforeAll(async () => {
    twilio = await startVendorStandIn();
    adapter = twilioAdapter(twilio.url);
  });
  afterAll(async () => {
    await adapter.close();
    await twilio.close();
  });
  beforeEach(() => twilio.reset());

  describe('sendSms', () => {
    it('POSTs a form to Messages.json with Basic auth, from the proxy number, with the broker’s StatusCallback, and returns the SID', async () => {
      twilio.reply(jsonAnswer(201, { sid: 'SM0123', status: 'queued' }));
      expect(await adapter.sendSms(SMS)).toMatchObject({ ok: true, value: { messageId: 'SM0123' } });
      expect(twilio.requests).toHaveLength(1);
      const [request] = twilio.requests;
      expect(request).toMatchObject({ method: 'POST', url: `${ACCOUNT}/Messages.json` });
      expect(request.headers.authorization).toBe(BASIC);
      expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(request.headers.accept).toBe('application/json');
      expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
        From: PROXY,
        To: OTHER,
        Body: 'where are you?',
        StatusCallback: `${PUBLIC_URL}/v1/providers/primary/status`,
      });
    });

    it('keeps the path of a base URL that has one (a regional edge behind a prefix)', async () => {
      const prefixed = twilioAdapter(`${twilio.url}/edge/`);
      twilio.reply(jsonAnswer(201, { sid: 'SM1' }));
      expect((await prefixed.sendSms(SMS)).ok).toBe(true);
      await prefixed.close();
      expect(twilio.requests.map((r) => r.url)).toEqual([`/edge${ACCOUNT}/Messages.json`]);
    });

    it.each([
      [400, 21211, "The 'To' number +1500555 is not a valid phone number.", false, 'invalid-number'],
      [400, 21614, "'To' number is not a valid mobile number", false, 'invalid-number'],
      [400, 21610, 'Attempt to send to unsubscribed recipient', false, 'bad-request'],
      [400, 21617, 'The concatenated message body exceeds the 1600 character limit.', false, 'bad-request'],
      [401, 20003, 'Authenticate', true, 'auth'],
      [403, 20005, 'Account not active', true, 'account'],
      [404, 20404, 'The requested resource was not found', true, 'bad-request'],
      [429, 20429, 'Too Many Requests', true, 'rate-limited'],
      [400, 14107, 'SMS send rate limit exceeded', true, 'rate-limited'],
    ])(
      'maps HTTP %i with Twilio error %i to its outcome row, the code named in the reason',
      async (status, code, message, counts, cause) => {
        twilio.reply(twilioError(status, code, message));
        const failed = failure(await adapter.sendSms(SMS));
        expect(failed).toMatchObject({ countsAgainstProvider: counts, cause, status, vendorCode: String(code) });
        expect(failed.reason).toMatch(new RegExp(`^primary: HTTP ${status} \\(Twilio ${code}\\) .+ on sms$`));
        expect(failed.reason).toContain(message.slice(0, 40));
      },
    );

    it.each([
      [400, 'not counted: the input', false, 'bad-request'],
      [401, 'counted: credentials', true, 'auth'],
      [403, 'counted: Twilio cannot serve us', true, 'bad-request'],
      [408, 'counted: a timeout', true, 'timeout'],
      [429, 'counted: rate limited', true, 'rate-limited'],
    ])('maps HTTP %i without a Twilio code by its status (%s)', async (status, _why, counts, cause) => {
      twilio.reply({ kind: 'answer', status, body: '<html>refused</html>', contentType: 'text/html' });
      const failed = failure(await adapter.sendSms(SMS));
      expect(failed).toMatchObject({ countsAgainstProvider: counts, cause, status });
      expect(failed.vendorCode).toBeUndefined();
      expect(failed.reason).toMatch(new RegExp(`^primary: HTTP ${status} \\S.* on sms$`));
    });

    it.each([500, 502, 503])('counts HTTP %i as a Twilio server error, with or without a Twilio body', async (status) => {
      twilio.reply({ kind: 'answer', status, body: 'upstream unavailable', contentType: 'text/plain' });
      expect(failure(await adapter.sendSms(SMS))).toEqual({
        countsAgainstProvider: true,
        cause: 'http-5xx',
        status,
        reason: `primary: HTTP ${status} Twilio server error on sms`,
      });
      twilio.reply(twilioError(status, 20500, 'An internal server error has occurred'));
      expect(failure(await adapter.sendSms(SMS))).toMatchObject({ countsAgainstProvider: true, cause: 'http-5xx', vendorCode: '20500' });
    });

    it('counts a 2xx without a SID as a rejection, and a 2xx that is not a JSON object as malformed', async () => {
      twilio.reply(jsonAnswer(201, { status: 'queued' }));
      expect(failure(await adapter.sendSms(SMS))).toEqual({
        countsAgainstProvider: true,
        cause: 'rejected',
        status: 201,
        reason: 'primary: HTTP 201 without a sid (rejected) on sms',
      });
      twilio.reply({ kind: 'answer', status: 200, body: '<Response/>', contentType: 'text/xml' });
      expect(failure(await adapter.sendSms(SMS))).toMatchObject({ countsAgainstProvider: true, cause: 'malformed', status: 200 });
      twilio.reply(jsonAnswer(201, { sid: 42 }));
      expect(failure(await adapter.sendSms(SMS))).toMatchObject({ countsAgainstProvider: true, cause: 'malformed' });
    });

    itCountsTransportFailures({
      operation: 'sms',
      standIn: () => twilio,
      adapter: twilioAdapter,
      call: (provider) => provider.sendSms(SMS),
      success: jsonAnswer(201, { sid: 'SM2' }),
    });
  });

  describe('healthCheck', () => {
    it('GETs the account resource with Basic auth and passes on an active account', async () => {
      twilio.reply(jsonAnswer(200, { sid: SID, status: 'active', type: 'Full' }));
      expect(await adapter.healthCheck()).toMatchObject({ ok: true });
      expect(twilio.requests).toHaveLength(1);
      const [request] = twilio.requests;
      expect(request).toMatchObject({ method: 'GET', url: `${ACCOUNT}.json`, body: '' });
      expect(request.headers.authorization).toBe(BASIC);
      expect(request.headers['content-type']).toBeUndefined();
    });

    it.each(['suspended', 'closed'])('fails on a %s account and counts it, naming the status', async (status) => {
      twilio.reply(jsonAnswer(200, { sid: SID, status }));
      const failed = failure(await adapter.healthCheck());
      expect(failed).toMatchObject({ countsAgainstProvider: true, cause: 'rejected', status: 200 });
      expect(failed.reason).toBe(`primary: HTTP 200 with account status "${status}" (rejected) on health`);
    });

    it('counts an account without a status as malformed', async () => {
      twilio.reply(jsonAnswer(200, { sid: SID }));
      expect(failure(await adapter.healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'malformed' });
    });

    it('counts refused credentials, and never puts the auth token into the result', async () => {
      twilio.reply(twilioError(401, 20003, 'Authenticate'));
      const result = await adapter.healthCheck();
      expect(failure(result)).toMatchObject({ countsAgainstProvider: true, cause: 'auth', status: 401, vendorCode: '20003' });
      expect(failure(result).reason).toContain('Twilio 20003');
      expect(JSON.stringify(result)).not.toContain(TOKEN);
      expect(JSON.stringify(result)).not.toContain(BASIC.slice(6));
    });

    it('counts a 5xx on the health check like any call', async () => {
      twilio.reply({ kind: 'answer', status: 503, body: '' });
      expect(failure(await adapter.healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'http-5xx', status: 503 });
    });

    itCountsTransportFailures({
      operation: 'health',
      standIn: () => twilio,
      adapter: twilioAdapter,
      call: (provider) => provider.healthCheck(),
      success: jsonAnswer(200, { sid: SID, status: 'active' }),
    });
  });

  describe('numbers', () => {
    const listed = (sid: string, phone: string, smsUrl: string | null = null) => ({
      sid,
      phone_number: phone,
      sms_url: smsUrl,
      voice_url: '',
      status_callback: null,
      capabilities: { sms: true, voice: true },
    });

    it('lists every page of IncomingPhoneNumbers.json, following next_page_uri, and maps each number', async () => {
      const next = `${ACCOUNT}/IncomingPhoneNumbers.json?PageSize=1000&Page=1&PageToken=PA1`;
      twilio.reply(
        jsonAnswer(200, { incoming_phone_numbers: [listed('PN1', PROXY, 'https://old.example.com/sms')], next_page_uri: next }),
        jsonAnswer(200, { incoming_phone_numbers: [listed('PN2', '+15005550002')], next_page_uri: null }),
      );
      expect(await adapter.numbers.listNumbers()).toMatchObject({
        ok: true,
        value: [
          { id: 'PN1', number: PROXY, smsUrl: 'https://old.example.com/sms', voiceUrl: null, statusCallback: null },
          { id: 'PN2', number: '+15005550002', smsUrl: null, voiceUrl: null, statusCallback: null },
        ],
      });
      expect(twilio.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        `GET ${ACCOUNT}/IncomingPhoneNumbers.json?PageSize=1000`,
        `GET ${next}`,
      ]);
      expect(twilio.requests.every((r) => r.headers.authorization === BASIC)).toBe(true);
    });

    it('fails the whole list when a later page fails, classified like any call', async () => {
      twilio.reply(
        jsonAnswer(200, { incoming_phone_numbers: [listed('PN1', PROXY)], next_page_uri: `${ACCOUNT}/IncomingPhoneNumbers.json?Page=1` }),
        twilioError(429, 20429, 'Too Many Requests'),
      );
      const failed = failure(await adapter.numbers.listNumbers());
      expect(failed).toMatchObject({ countsAgainstProvider: true, cause: 'rate-limited', status: 429, vendorCode: '20429' });
      expect(failed.reason).toMatch(/^primary: HTTP 429 \(Twilio 20429\) .* on numbers$/);
    });

    it.each([
      ['a page without incoming_phone_numbers', { numbers: [] }],
      ['a number without its phone_number', { incoming_phone_numbers: [{ sid: 'PN1' }] }],
      ['a next_page_uri on another host', { incoming_phone_numbers: [], next_page_uri: 'https://elsewhere.example.com/2010-04-01/x' }],
    ])('counts %s as malformed and follows no other page', async (_what, body) => {
      twilio.reply(jsonAnswer(200, body));
      expect(failure(await adapter.numbers.listNumbers())).toMatchObject({ countsAgainstProvider: true, cause: 'malformed', status: 200 });
      expect(twilio.requests).toHaveLength(1);
    });

    it('gives up on a list whose next_page_uri never ends, after 100 pages, and counts it', async () => {
      const page = jsonAnswer(200, { incoming_phone_numbers: [], next_page_uri: `${ACCOUNT}/IncomingPhoneNumbers.json?Page=1` });
      twilio.reply(...Array.from({ length: 100 }, () => page));
      expect(failure(await adapter.numbers.listNumbers())).toMatchObject({
        countsAgainstProvider: true,
        cause: 'malformed',
        reason: 'primary: more than 100 pages of numbers on numbers',
      });
      expect(twilio.requests).toHaveLength(100);
    });

    itCountsTransportFailures({
      operation: 'numbers',
      standIn: () => twilio,
      adapter: twilioAdapter,
      call: (provider) => provider.numbers!.listNumbers(),
      success: jsonAnswer(200, { incoming_phone_numbers: [], next_page_uri: null }),
    });

    it('points a number at the broker: a form POST to its IncomingPhoneNumbers resource with the three webhooks', async () => {
      const webhooks = {
        smsUrl: `${PUBLIC_URL}/v1/providers/primary/inbound/sms`,
        voiceUrl: `${PUBLIC_URL}/v1/providers/primary/inbound/voice`,
        statusCallback: `${PUBLIC_URL}/v1/providers/primary/status`,
      };
      const number = { id: 'PN1', number: PROXY, smsUrl: null, voiceUrl: null, statusCallback: null };
      twilio.reply(jsonAnswer(200, { sid: 'PN1', phone_number: PROXY, sms_url: webhooks.smsUrl }));
      expect(await adapter.numbers.pointNumber(number, webhooks)).toMatchObject({ ok: true });
      const [request] = twilio.requests;
      expect(request).toMatchObject({ method: 'POST', url: `${ACCOUNT}/IncomingPhoneNumbers/PN1.json` });
      expect(request.headers.authorization).toBe(BASIC);
      expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
        SmsUrl: webhooks.smsUrl,
        SmsMethod: 'POST',
        VoiceUrl: webhooks.voiceUrl,
        VoiceMethod: 'POST',
        StatusCallback: webhooks.statusCallback,
        StatusCallbackMethod: 'POST',
      });

      twilio.reply(twilioError(404, 20404, 'The requested resource was not found'));
      expect(failure(await adapter.numbers.pointNumber(number, webhooks))).toMatchObject({
        countsAgainstProvider: true,
        cause: 'bad-request',
        status: 404,
        vendorCode: '20404',
      });
      twilio.reply(jsonAnswer(200, {}));
      expect(failure(await adapter.numbers.pointNumber(number, webhooks))).toMatchObject({
        countsAgainstProvider: true,
        cause: 'rejected',
      });
    });
  });

  describe('operations Twilio has no call for', () => {
    it('binds and unbinds without a request: the broker is the session store', async () => {
      // Called through the port, as the broker calls it.
      const port: CpaasProvider = adapter;
      expect(port.keepsSessions).toBe(false);
      const req = { sessionId: 'ses_1', proxyNumber: PROXY, participants: [OTHER, '+15005550007'] as [string, string] };
      expect(await port.bindProxy(req)).toEqual({ ok: true, value: { bindingId: 'ses_1' }, latencyMs: 0 });
      expect(await port.unbindProxy({ sessionId: 'ses_1', proxyNumber: PROXY, bindingId: 'ses_1' })).toMatchObject({ ok: true });
      expect(twilio.requests).toEqual([]);
    });
  });
});
