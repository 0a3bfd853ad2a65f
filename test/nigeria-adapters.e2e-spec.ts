/**
 * The Africa's Talking and Infobip adapters through the suite's fault proxy, in front of their
 * loopback stand-ins: every call is aborted after PROVIDER_CALL_TIMEOUT_MS and a transport fault is
 * a counted failure, never a throw; a 2xx without its id is a counted rejection; no failure reason
 * carries a credential; every request that reached a stand-in was one it accepts.
 */
import { AfricasTalkingProviderAdapter, InfobipProviderAdapter, type CpaasProvider, type ProviderResult } from '@app/cpaas';
import { startAfricasTalkingMock, type AfricasTalkingMock } from './support/africastalking-mock';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { startInfobipMock, type InfobipMock } from './support/infobip-mock';

const AT = { username: 'lagos-rides', apiKey: 'atsk_' + 'c0ffee00'.repeat(8), webhookToken: 'w'.repeat(40) };
const IB = { apiKey: 'feedfacefeedfacefeedfacefeedface-0011aabb', webhookToken: 'v'.repeat(40) };
const sms = { from: '+2349020000001', to: '+2348031234567', text: 'Your rider is waiting' };

let atMock: AfricasTalkingMock;
let ibMock: InfobipMock;
let atProxy: FaultProxy;
let ibProxy: FaultProxy;
let at: AfricasTalkingProviderAdapter;
let ib: InfobipProviderAdapter;

beforeAll(async () => {
  [atMock, ibMock] = await Promise.all([startAfricasTalkingMock(AT.apiKey, AT.username), startInfobipMock(IB.apiKey)]);
  [atProxy, ibProxy] = await Promise.all([startFaultProxy(atMock.url), startFaultProxy(ibMock.url)]);
  const common = { publicUrl: 'https://broker.example.com', timeoutMs: 400 };
  at = new AfricasTalkingProviderAdapter({ name: 'primary', ...AT, ...common, baseUrl: atProxy.url });
  ib = new InfobipProviderAdapter({ name: 'failover', ...IB, ...common, baseUrl: ibProxy.url });
});

afterAll(async () => {
  await Promise.all([at?.close(), ib?.close()]);
  await Promise.all([atProxy?.close(), ibProxy?.close(), atMock?.close(), ibMock?.close()]);
});

afterEach(() => {
  atProxy.always({ kind: 'pass' });
  ibProxy.always({ kind: 'pass' });
  expect(atMock.refusals).toEqual([]);
  expect(ibMock.refusals).toEqual([]);
});

function failure<T>(result: ProviderResult<T>) {
  if (result.ok) throw new Error('expected a failure');
  return result.failure;
}

const operations: Array<[string, () => CpaasProvider, (p: CpaasProvider) => Promise<ProviderResult<unknown>>, () => FaultProxy]> = [
  ["Africa's Talking send", () => at, (p) => p.sendSms(sms), () => atProxy],
  ["Africa's Talking health", () => at, (p) => p.healthCheck(), () => atProxy],
  ['Infobip send', () => ib, (p) => p.sendSms(sms), () => ibProxy],
  ['Infobip dialog', () => ib, (p) => p.bridgeCall!({ from: sms.from, to: sms.to, inboundCallId: 'call-1' }), () => ibProxy],
  ['Infobip health', () => ib, (p) => p.healthCheck(), () => ibProxy],
];

describe.each(operations)('%s', (_name, adapter, run, proxy) => {
  it('passes through to the stand-in', async () => {
    expect((await run(adapter())).ok).toBe(true);
  });

  it('a reset connection is a counted transport failure', async () => {
    proxy().always({ kind: 'reset' });
    expect(failure(await run(adapter()))).toMatchObject({ countsAgainstProvider: true, cause: 'transport' });
  });

  it('no answer is a counted timeout (PROVIDER_CALL_TIMEOUT_MS)', async () => {
    proxy().always({ kind: 'hang' });
    const failed = failure(await run(adapter()));
    expect(failed).toMatchObject({ countsAgainstProvider: true, cause: 'timeout' });
    expect(failed.reason).toContain('no answer within 400 ms');
  });

  it('a 503 is counted, and its reason holds no credential', async () => {
    proxy().always({ kind: 'answer', status: 503, body: '{"errorCode":"E503","description":"Service Unavailable"}' });
    const failed = failure(await run(adapter()));
    expect(failed).toMatchObject({ countsAgainstProvider: true, cause: 'http-5xx', status: 503 });
    for (const secret of [AT.apiKey, AT.webhookToken, IB.apiKey, IB.webhookToken]) expect(failed.reason).not.toContain(secret);
  });
});

describe('2xx answers without what was asked for', () => {
  it("Africa's Talking: a 201 whose recipient has no messageId is a counted rejection", async () => {
    atProxy.always({ kind: 'rewrite', body: (upstream) => upstream.replace(/"messageId":"[^"]*"/, '"messageId":"None"') });
    expect(failure(await at.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
  });

  it('Infobip: a send without messageId, a dialog without id, are counted rejections', async () => {
    ibProxy.always({
      kind: 'rewrite',
      body: (upstream) => upstream.replace(/"messageId":"[^"]*",?/, '').replace(/"id":"dialog-[^"]*",?/, ''),
    });
    expect(failure(await ib.sendSms(sms))).toMatchObject({ countsAgainstProvider: true, cause: 'rejected' });
    expect(failure(await ib.bridgeCall({ from: sms.from, to: sms.to, inboundCallId: 'call-2' }))).toMatchObject({
      countsAgainstProvider: true,
      cause: 'rejected',
    });
  });

  it('Infobip: a wrong API key is refused by the stand-in (401) and counted as auth', async () => {
    const wrong = new InfobipProviderAdapter({
      name: 'failover',
      apiKey: 'x'.repeat(32),
      webhookToken: IB.webhookToken,
      publicUrl: 'https://b.example.com',
      baseUrl: ibProxy.url,
      timeoutMs: 400,
    });
    expect(failure(await wrong.healthCheck())).toMatchObject({ countsAgainstProvider: true, cause: 'auth', status: 401 });
    await wrong.close();
    ibMock.refusals.splice(0); // the refusal was the point
  });
});
