/**
 * The Vonage adapter against what Vonage publishes: its account and numbers API descriptions
 * served by Prism (any request Prism refuses fails the test), the Messages API v1 request compared
 * with what the official `@vonage/messages` package sends for the same SMS (captured on a local
 * server: the v1 API is newer than the published descriptions), and the fault proxy in front.
 */
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { resolve } from 'node:path';
import { Messages, SMS } from '@vonage/messages';
import jwt from 'jsonwebtoken';
import { VonageProviderAdapter, type CpaasProvider, type ProviderResult } from '@app/cpaas';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { prismRefusal, startPrism, type PrismServer } from './support/prism';
import { startVonageMessagesMock, type VonageMessagesMock } from './support/vonage-messages-mock';

const FIXTURES = resolve('libs/cpaas/src/vonage/fixtures');
const apiKey = 'abcd1234';
const apiSecret = 'Abcdef0123456789';
const applicationId = 'ffffffff-bbbb-cccc-dddd-0123456789ab';
const signatureSecret = 'signature-secret-0123456789';
const publicUrl = 'https://broker.example.com';
const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

let account: PrismServer;
let numbers: PrismServer;
let messages: VonageMessagesMock;
let proxy: FaultProxy;
const adapters: CpaasProvider[] = [];

function adapter(overrides: { privateKey?: string; baseUrl?: string; timeoutMs?: number } = {}): VonageProviderAdapter {
  const made = new VonageProviderAdapter({
    name: 'failover',
    baseUrl: overrides.baseUrl ?? proxy.url,
    apiKey,
    apiSecret,
    applicationId,
    privateKey: overrides.privateKey,
    signatureSecret,
    publicUrl,
    timeoutMs: overrides.timeoutMs ?? 5_000,
  });
  adapters.push(made);
  return made;
}

function failure<T>(result: ProviderResult<T>) {
  if (result.ok) throw new Error('expected a failure');
  return result.failure;
}

beforeAll(async () => {
  [account, numbers, messages] = await Promise.all([
    startPrism(`${FIXTURES}/account.yml`),
    startPrism(`${FIXTURES}/numbers.yml`),
    startVonageMessagesMock(),
  ]);
  proxy = await startFaultProxy((path) =>
    path.startsWith('/v1/messages') ? messages.url : path.startsWith('/account/get-balance') ? account.url : numbers.url,
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(adapters.map((a) => a.close()));
  await Promise.all([proxy?.close(), account?.close(), numbers?.close(), messages?.close()]);
});

afterEach(() => {
  proxy.always({ kind: 'pass' });
  // Every request that reached Vonage's published descriptions was valid against them.
  expect(proxy.refusals(prismRefusal)).toEqual([]);
});

describe('Messages API v1: the adapter sends what @vonage/messages sends', () => {
  const sms = { from: '+447700900000', to: '+447700900001', text: 'Masked hello' };
  const webhookUrl = `${publicUrl}/v1/providers/failover/status`;

  async function captured<T>(send: () => Promise<T>) {
    const before = messages.requests.length;
    await send();
    expect(messages.requests).toHaveLength(before + 1);
    return messages.requests[before];
  }

  it('with the API key and secret (Basic): same method, path, content type, JSON body and Authorization', async () => {
    const sdk = new Messages({ apiKey, apiSecret }, { apiHost: messages.url });
    const fromSdk = await captured(() =>
      sdk.send(
        new SMS({ channel: 'sms', messageType: 'text', to: '447700900001', from: '447700900000', text: 'Masked hello', webhookUrl }),
      ),
    );
    const ours = await captured(async () => expect((await adapter({ baseUrl: messages.url }).sendSms(sms)).ok).toBe(true));
    expect([ours.method, ours.path]).toEqual([fromSdk.method, fromSdk.path]);
    expect(ours.headers['content-type']).toMatch(/^application\/json/);
    expect(fromSdk.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(ours.body)).toEqual(JSON.parse(fromSdk.body));
    expect(ours.headers.authorization).toBe(fromSdk.headers.authorization);
  });

  it("with the application's private key: both send an RS256 JWT of the application", async () => {
    const sdk = new Messages({ applicationId, privateKey }, { apiHost: messages.url });
    const fromSdk = await captured(() =>
      sdk.send(
        new SMS({ channel: 'sms', messageType: 'text', to: '447700900001', from: '447700900000', text: 'Masked hello', webhookUrl }),
      ),
    );
    const ours = await captured(async () => expect((await adapter({ baseUrl: messages.url, privateKey }).sendSms(sms)).ok).toBe(true));
    expect(JSON.parse(ours.body)).toEqual(JSON.parse(fromSdk.body));
    const claims = (header: string | undefined) => {
      expect(header).toMatch(/^Bearer /);
      return jwt.verify(header!.slice('Bearer '.length), createPublicKey(publicKey), { algorithms: ['RS256'] }) as Record<string, unknown>;
    };
    const [mine, theirs] = [claims(ours.headers.authorization), claims(fromSdk.headers.authorization)];
    expect(Object.keys(mine).sort()).toEqual(Object.keys(theirs).sort());
    expect(mine.application_id).toBe(applicationId);
  });

  it("the message's uuid is the relay's provider id", async () => {
    const sent = await adapter().sendSms(sms);
    expect(sent).toMatchObject({ ok: true, value: { messageId: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
  });
});

describe('account and numbers APIs, against Vonage descriptions served by Prism', () => {
  it('health check: the balance read passes', async () => {
    expect(await adapter().healthCheck()).toMatchObject({ ok: true });
    expect(proxy.exchanges.at(-1)).toMatchObject({
      method: 'GET',
      path: expect.stringMatching(/^\/account\/get-balance\?api_key=abcd1234&api_secret=/),
    });
  });

  it("lists the account's numbers and links one to the broker's application", async () => {
    const provider = adapter();
    const listed = await provider.numbers.listNumbers();
    expect(listed).toMatchObject({ ok: true });
    if (!listed.ok) return;
    // Prism answers the description's example: one GB number linked to another application.
    expect(listed.value).toEqual([
      {
        id: 'GB:447700900000',
        number: '+447700900000',
        smsUrl: 'application aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
        voiceUrl: 'application aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
        statusCallback: 'application aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
      },
    ]);
    const webhooks = { smsUrl: '', voiceUrl: '', statusCallback: '' };
    expect(await provider.numbers.pointNumber(listed.value[0], webhooks)).toMatchObject({ ok: true });
    const update = proxy.exchanges.at(-1)!;
    expect(update).toMatchObject({ method: 'POST', path: expect.stringMatching(/^\/number\/update\?/) });
    expect(Object.fromEntries(new URLSearchParams(update.body))).toEqual({
      country: 'GB',
      msisdn: '447700900000',
      app_id: applicationId,
      voiceStatusCallback: `${publicUrl}/v1/providers/failover/status`,
    });
  });
});

describe('faults: what counts against Vonage', () => {
  const sms = { from: '+447700900000', to: '+447700900001', text: 'hi' };
  const problem = (code: string) => JSON.stringify({ type: `https://developer.vonage.com/api-errors/messages#${code}`, title: code });

  it.each([
    ['503', true, 'http-5xx', { kind: 'answer' as const, status: 503, body: '{}' }],
    ['429 throttled (1000)', true, 'rate-limited', { kind: 'answer' as const, status: 429, body: problem('1000') }],
    [
      '401 unauthorized',
      true,
      'auth',
      { kind: 'answer' as const, status: 401, body: '{"type":"https://developer.vonage.com/api-errors#unauthorized"}' },
    ],
    ['402 partner quota (1070)', true, 'account', { kind: 'answer' as const, status: 402, body: problem('1070') }],
    ['422 invalid params (1020)', false, 'bad-request', { kind: 'answer' as const, status: 422, body: problem('1020') }],
    ['422 number barred (1050)', false, 'invalid-number', { kind: 'answer' as const, status: 422, body: problem('1050') }],
    ['a reset connection', true, 'transport', { kind: 'reset' as const }],
    ['202 without message_uuid', true, 'rejected', { kind: 'answer' as const, status: 202, body: '{}' }],
  ])('SMS answered with %s: counts %s (%s)', async (_name, counts, cause, fault) => {
    proxy.next(fault);
    const result = failure(await adapter().sendSms(sms));
    expect(result).toMatchObject({ countsAgainstProvider: counts, cause });
    expect(result.reason).toMatch(/^failover: .* on sms$/);
    expect(result.reason).not.toContain(apiSecret);
  });

  it('no answer within the timeout counts as a timeout', async () => {
    proxy.next({ kind: 'hang' });
    expect(failure(await adapter({ timeoutMs: 300 }).sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'timeout' });
  });

  it('health: a zero balance without auto-reload fails the check; 401 counts', async () => {
    proxy.next({ kind: 'rewrite', body: () => '{"value":0,"autoReload":false}' });
    expect(failure(await adapter().healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
    proxy.next({ kind: 'answer', status: 401, body: '{"error-code":"401","error-code-label":"authentication failed"}' });
    const refused = failure(await adapter().healthCheck());
    expect(refused).toMatchObject({ countsAgainstProvider: true, cause: 'auth', status: 401 });
    expect(refused.reason).not.toContain(apiSecret);
  });
});
