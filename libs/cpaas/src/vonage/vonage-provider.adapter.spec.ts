/**
 * The Vonage adapter against a loopback stand-in for Vonage's APIs (one base URL for the Messages
 * and the REST APIs, as `name=vonage:https://host` gives it): every operation sends the request the
 * vendor's descriptions (/work/shared/vendor-specs/vonage: messages, account, numbers) ask for, and
 * every kind of answer comes back as the result a caller sees (vonage-outcomes.ts for the errors).
 */
import { generateKeyPairSync, verify } from 'node:crypto';
import { failureOf as failure, itCountsTransportFailures } from '../testing/transport-outcomes';
import { jsonAnswer, startVendorStandIn, type VendorStandIn } from '../testing/vendor-stand-in';
import { VonageProviderAdapter } from './vonage-provider.adapter';

const API_KEY = 'a1b2c3d4';
const API_SECRET = 'Sup3rS3cretValue';
const APPLICATION_ID = 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab';
const BASIC = `Basic ${Buffer.from(`${API_KEY}:${API_SECRET}`).toString('base64')}`;
const PUBLIC_URL = 'https://broker.example.com';
const PROXY = '+447700900001';
const OTHER = '+447700900002';
const SMS = { from: PROXY, to: OTHER, text: 'where are you?' };
const STATUS_URL = `${PUBLIC_URL}/v1/providers/primary/status`;

/** A problem+json error of the Messages API, `type` ending in its code. */
const problem = (status: number, code: string, title: string, detail: string) =>
  jsonAnswer(
    status,
    { type: `https://developer.vonage.com/api-errors/messages#${code}`, title, detail, instance: 'bf0ca0bf-927b-4b5d-9d43-8b5b5e5b5b5b' },
    'application/problem+json',
  );
/** The REST APIs' (account, numbers) refusal of the key and secret, as their descriptions give it. */
const restUnauthorized = jsonAnswer(401, { 'error-code': '401', 'error-code-label': 'authentication failed' });

const vonageAdapter = (baseUrl: string, overrides: { timeoutMs?: number; privateKey?: string } = {}) =>
  new VonageProviderAdapter({
    name: 'primary',
    baseUrl,
    apiKey: API_KEY,
    apiSecret: API_SECRET,
    applicationId: APPLICATION_ID,
    signatureSecret: 'signature-secret',
    publicUrl: PUBLIC_URL,
    timeoutMs: overrides.timeoutMs ?? 2_000,
    ...(overrides.privateKey ? { privateKey: overrides.privateKey } : {}),
  });

describe('VonageProviderAdapter against a loopback Vonage', () => {
  let vonage: VendorStandIn;
  let adapter: VonageProviderAdapter;

  beforeAll(async () => {
    vonage = await startVendorStandIn();
    adapter = vonageAdapter(vonage.url);
  });
  afterAll(async () => {
    await adapter.close();
    await vonage.close();
  });
  beforeEach(() => vonage.reset());

  describe('sendSms', () => {
    it('POSTs an SMS text message to /v1/messages as JSON with Basic auth, numbers as digits, and returns the message_uuid', async () => {
      vonage.reply(jsonAnswer(202, { message_uuid: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab' }));
      expect(await adapter.sendSms(SMS)).toMatchObject({ ok: true, value: { messageId: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab' } });
      expect(vonage.requests).toHaveLength(1);
      const [request] = vonage.requests;
      expect(request).toMatchObject({ method: 'POST', url: '/v1/messages' });
      expect(request.headers.authorization).toBe(BASIC);
      expect(request.headers['content-type']).toBe('application/json');
      expect(JSON.parse(request.body)).toEqual({
        message_type: 'text',
        channel: 'sms',
        from: '447700900001',
        to: '447700900002',
        text: 'where are you?',
        webhook_url: STATUS_URL,
      });
    });

    it('signs with a JWT of the application (RS256, its application_id) when the private key is configured', async () => {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', {
        modulusLength: 2048,
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      });
      const signed = vonageAdapter(vonage.url, { privateKey });
      vonage.reply(jsonAnswer(202, { message_uuid: 'm-jwt' }));
      expect(await signed.sendSms(SMS)).toMatchObject({ ok: true, value: { messageId: 'm-jwt' } });
      await signed.close();
      const [scheme, token] = (vonage.requests[0].headers.authorization ?? '').split(' ');
      expect(scheme).toBe('Bearer');
      const [header, payload, signature] = token.split('.');
      expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toMatchObject({ alg: 'RS256' });
      expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({ application_id: APPLICATION_ID });
      expect(verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
    });

    it.each([
      [422, '1020', 'Invalid params', 'The value of `to` is not a valid phone number.', false, 'bad-request'],
      [422, '1040', 'Invalid message', 'Unrecognised number prefix.', false, 'invalid-number'],
      [422, '1050', 'Number barred', 'The recipient may not receive messages.', false, 'invalid-number'],
      [422, '1090', 'Message too long', 'The text is over the limit.', false, 'bad-request'],
      [429, '1000', 'Throttled', 'You have exceeded the submission capacity allowed on this account.', true, 'rate-limited'],
      [402, '1070', 'Partner quota exceeded', 'Your account does not have sufficient credit.', true, 'account'],
      [403, '1120', 'Illegal sender address', 'The from number is not allowed.', true, 'rejected'],
      [500, '1030', 'Internal error', 'There was an error processing your request.', true, 'http-5xx'],
      [401, 'unauthorized', 'Unauthorized', 'You did not provide correct credentials.', true, 'auth'],
    ])(
      'maps HTTP %i with problem code %s to its outcome row, the code and Vonage’s words in the reason',
      async (status, code, title, detail, counts, cause) => {
        vonage.reply(problem(status, code, title, detail));
        const failed = failure(await adapter.sendSms(SMS));
        expect(failed).toEqual({
          countsAgainstProvider: counts,
          cause,
          status,
          vendorCode: code,
          reason: `primary: HTTP ${status} (${code}): ${title}: ${detail} on sms`,
        });
      },
    );

    it.each([
      [400, false, 'bad-request'],
      [401, true, 'auth'],
      [404, true, 'rejected'],
      [408, true, 'timeout'],
      [422, false, 'bad-request'],
      [429, true, 'rate-limited'],
    ])('maps HTTP %i without a known code by its status', async (status, counts, cause) => {
      vonage.reply({ kind: 'answer', status, body: '', contentType: 'text/plain' });
      expect(failure(await adapter.sendSms(SMS))).toEqual({
        countsAgainstProvider: counts,
        cause,
        status,
        reason: `primary: HTTP ${status} on sms`,
      });
    });

    it.each([500, 502, 503])('counts HTTP %i as a server error', async (status) => {
      vonage.reply({ kind: 'answer', status, body: '<html>Bad gateway</html>', contentType: 'text/html' });
      expect(failure(await adapter.sendSms(SMS))).toMatchObject({ countsAgainstProvider: true, cause: 'http-5xx', status });
    });

    it('counts a 2xx without a message_uuid as a rejection, and a 2xx that is not a JSON object as malformed', async () => {
      vonage.reply(jsonAnswer(202, {}));
      expect(failure(await adapter.sendSms(SMS))).toEqual({
        countsAgainstProvider: true,
        cause: 'rejected',
        status: 202,
        reason: 'primary: HTTP 202 without message_uuid (rejected) on sms',
      });
      vonage.reply({ kind: 'answer', status: 202, body: 'accepted', contentType: 'text/plain' });
      expect(failure(await adapter.sendSms(SMS))).toMatchObject({ countsAgainstProvider: true, cause: 'malformed', status: 202 });
      vonage.reply(jsonAnswer(202, { message_uuid: 7 }));
      expect(failure(await adapter.sendSms(SMS))).toMatchObject({ countsAgainstProvider: true, cause: 'malformed' });
    });

    itCountsTransportFailures({
      operation: 'sms',
      standIn: () => vonage,
      adapter: (baseUrl, timeoutMs) => vonageAdapter(baseUrl, { timeoutMs }),
      call: (provider) => provider.sendSms(SMS),
      success: jsonAnswer(202, { message_uuid: 'm2' }),
    });
  });

  describe('healthCheck', () => {
    it('GETs /account/get-balance with the key and secret as query parameters, and passes on a positive balance', async () => {
      vonage.reply(jsonAnswer(200, { value: 10.171275, autoReload: false }));
      expect(await adapter.healthCheck()).toMatchObject({ ok: true });
      expect(vonage.requests).toHaveLength(1);
      const [request] = vonage.requests;
      expect(request).toMatchObject({
        method: 'GET',
        pathname: '/account/get-balance',
        query: { api_key: API_KEY, api_secret: API_SECRET },
      });
      expect(request.body).toBe('');
    });

    it('fails on an empty balance without auto-reload (no SMS would go out), and passes on one with it', async () => {
      vonage.reply(jsonAnswer(200, { value: 0, autoReload: false }));
      expect(failure(await adapter.healthCheck())).toEqual({
        countsAgainstProvider: true,
        cause: 'rejected',
        status: 200,
        reason: 'primary: HTTP 200 with a balance of 0 and no auto-reload (rejected) on health',
      });
      vonage.reply(jsonAnswer(200, { value: 0, autoReload: true }));
      expect(await adapter.healthCheck()).toMatchObject({ ok: true });
    });

    it('counts a balance that is not a number as malformed', async () => {
      vonage.reply(jsonAnswer(200, { value: '10.17' }));
      expect(failure(await adapter.healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'malformed', status: 200 });
    });

    it('counts refused credentials, and never puts the secret (sent in the query) into the result', async () => {
      vonage.reply(restUnauthorized);
      const result = await adapter.healthCheck();
      expect(failure(result)).toEqual({ countsAgainstProvider: true, cause: 'auth', status: 401, reason: 'primary: HTTP 401 on health' });
      expect(JSON.stringify(result)).not.toContain(API_SECRET);
    });

    it('counts a 5xx on the health check like any call', async () => {
      vonage.reply({ kind: 'answer', status: 503, body: '' });
      expect(failure(await adapter.healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'http-5xx', status: 503 });
    });

    itCountsTransportFailures({
      operation: 'health',
      standIn: () => vonage,
      adapter: (baseUrl, timeoutMs) => vonageAdapter(baseUrl, { timeoutMs }),
      call: (provider) => provider.healthCheck(),
      success: jsonAnswer(200, { value: 1.5, autoReload: false }),
    });
  });

  describe('numbers', () => {
    const owned = (msisdn: string, links: Record<string, string> = {}) => ({
      country: 'GB',
      msisdn,
      type: 'mobile-lvn',
      features: ['SMS', 'VOICE'],
      ...links,
    });

    it('lists the account’s numbers page by page (size 100, index from 1) and says where each one points', async () => {
      const firstPage = Array.from({ length: 100 }, (_, i) => owned(`4477008${String(i).padStart(5, '0')}`));
      firstPage[0] = owned('447700900001', {
        messagesCallbackType: 'app',
        messagesCallbackValue: APPLICATION_ID,
        voiceCallbackType: 'app',
        voiceCallbackValue: APPLICATION_ID,
      });
      firstPage[1] = owned('447700900002', {
        messagesCallbackValue: 'other-app',
        voiceCallbackType: 'app',
        voiceCallbackValue: 'other-app',
      });
      vonage.reply(jsonAnswer(200, { count: 101, numbers: firstPage }), jsonAnswer(200, { count: 101, numbers: [owned('447700900999')] }));

      const result = await adapter.numbers.listNumbers();
      if (!result.ok) throw new Error(result.failure.reason);
      expect(result.value).toHaveLength(101);
      expect(result.value.slice(0, 3)).toEqual([
        {
          id: 'GB:447700900001',
          number: '+447700900001',
          smsUrl: `${PUBLIC_URL}/v1/providers/primary/inbound/sms`,
          voiceUrl: `${PUBLIC_URL}/v1/providers/primary/inbound/voice`,
          statusCallback: STATUS_URL,
        },
        {
          id: 'GB:447700900002',
          number: '+447700900002',
          smsUrl: 'application other-app',
          voiceUrl: 'application other-app',
          statusCallback: 'application other-app',
        },
        { id: 'GB:447700800002', number: '+447700800002', smsUrl: null, voiceUrl: null, statusCallback: null },
      ]);
      expect(result.value[100]).toMatchObject({ id: 'GB:447700900999', number: '+447700900999' });
      expect(vonage.requests.map((r) => [r.method, r.pathname, r.query])).toEqual([
        ['GET', '/account/numbers', { api_key: API_KEY, api_secret: API_SECRET, size: '100', index: '1' }],
        ['GET', '/account/numbers', { api_key: API_KEY, api_secret: API_SECRET, size: '100', index: '2' }],
      ]);
    });

    it('stops after a short page, and reads an account without numbers as an empty list', async () => {
      vonage.reply(jsonAnswer(200, { count: 1, numbers: [owned('447700900001')] }));
      expect(await adapter.numbers.listNumbers()).toMatchObject({ ok: true, value: [{ number: '+447700900001' }] });
      vonage.reply(jsonAnswer(200, { count: 0 }));
      expect(await adapter.numbers.listNumbers()).toMatchObject({ ok: true, value: [] });
      expect(vonage.requests).toHaveLength(2);
    });

    it.each([
      ['a number without a valid msisdn', { count: 1, numbers: [{ country: 'GB', msisdn: '+447700900001' }] }],
      ['a number without a country', { count: 1, numbers: [{ msisdn: '447700900001' }] }],
      ['a count that is not a number', { count: '1', numbers: [] }],
    ])('counts %s as malformed', async (_what, body) => {
      vonage.reply(jsonAnswer(200, body));
      expect(failure(await adapter.numbers.listNumbers())).toMatchObject({ countsAgainstProvider: true, cause: 'malformed', status: 200 });
    });

    it('counts refused credentials on the list, secret kept out', async () => {
      vonage.reply(restUnauthorized);
      const result = await adapter.numbers.listNumbers();
      expect(failure(result)).toEqual({ countsAgainstProvider: true, cause: 'auth', status: 401, reason: 'primary: HTTP 401 on numbers' });
      expect(JSON.stringify(result)).not.toContain(API_SECRET);
    });

    itCountsTransportFailures({
      operation: 'numbers',
      standIn: () => vonage,
      adapter: (baseUrl, timeoutMs) => vonageAdapter(baseUrl, { timeoutMs }),
      call: (provider) => provider.numbers!.listNumbers(),
      success: jsonAnswer(200, { count: 0, numbers: [] }),
    });

    it('points a number at the broker: POST /number/update linking it to the application, with the voice status callback', async () => {
      const number = { id: 'GB:447700900001', number: PROXY, smsUrl: null, voiceUrl: null, statusCallback: null };
      const webhooks = { smsUrl: 'unused', voiceUrl: 'unused', statusCallback: STATUS_URL };
      vonage.reply(jsonAnswer(200, { 'error-code': '200', 'error-code-label': 'success' }));
      expect(await adapter.numbers.pointNumber(number, webhooks)).toMatchObject({ ok: true });
      const [request] = vonage.requests;
      expect(request).toMatchObject({ method: 'POST', pathname: '/number/update', query: { api_key: API_KEY, api_secret: API_SECRET } });
      expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
        country: 'GB',
        msisdn: '447700900001',
        app_id: APPLICATION_ID,
        voiceStatusCallback: STATUS_URL,
      });

      vonage.reply(jsonAnswer(200, { 'error-code': '420', 'error-code-label': 'Invalid parameters' }));
      expect(failure(await adapter.numbers.pointNumber(number, webhooks))).toEqual({
        countsAgainstProvider: true,
        cause: 'rejected',
        status: 200,
        reason: 'primary: HTTP 200 with error-code "420" (rejected) on numbers',
      });
      vonage.reply(restUnauthorized);
      expect(failure(await adapter.numbers.pointNumber(number, webhooks))).toMatchObject({ countsAgainstProvider: true, cause: 'auth' });
    });
  });

  describe('operations Vonage has no call for', () => {
    it('refuses to bind without a request and without counting it; unbinding has nothing to do', async () => {
      expect(adapter.keepsSessions).toBe(false);
      const participants: [string, string] = [OTHER, '+447700900003'];
      expect(failure(await adapter.bindProxy({ sessionId: 'ses_1', proxyNumber: PROXY, participants }))).toEqual({
        countsAgainstProvider: false,
        cause: 'bad-request',
        reason: 'primary: Vonage has no bind operation',
      });
      expect(await adapter.unbindProxy({ sessionId: 'ses_1', proxyNumber: PROXY, bindingId: 'ses_1' })).toMatchObject({ ok: true });
      expect(vonage.requests).toEqual([]);
    });
  });
});
