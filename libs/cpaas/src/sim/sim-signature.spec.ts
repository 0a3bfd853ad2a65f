import { SimProviderAdapter } from './sim-provider.adapter';
import { signSimWebhook, verifySimSignature } from './sim-signature';

const NOW_MS = Date.parse('2026-07-15T12:00:00Z');
const NOW_SEC = NOW_MS / 1000;
const body = Buffer.from('{"eventId":"evt_1","from":"+2348030000001"}');

describe('sim webhook signatures', () => {
  const adapter = new SimProviderAdapter({
    name: 'primary',
    baseUrl: 'http://127.0.0.1:9',
    timeoutMs: 100,
    webhookSecret: 's3cret',
    clock: { now: () => NOW_MS },
  });
  afterAll(() => adapter.close());

  it('accepts a webhook signed with the secret, within the tolerance', () => {
    expect(adapter.verifyWebhook({ headers: signSimWebhook('s3cret', body, NOW_SEC), rawBody: body })).toBe(true);
    expect(adapter.verifyWebhook({ headers: signSimWebhook('s3cret', body, NOW_SEC - 299), rawBody: body })).toBe(true);
  });

  it('refuses a tampered body, another secret, a stale or future timestamp, and missing headers', () => {
    const headers = signSimWebhook('s3cret', body, NOW_SEC);
    expect(adapter.verifyWebhook({ headers, rawBody: Buffer.from(body.toString().replace('0001', '0002')) })).toBe(false);
    expect(adapter.verifyWebhook({ headers: signSimWebhook('other', body, NOW_SEC), rawBody: body })).toBe(false);
    expect(adapter.verifyWebhook({ headers: signSimWebhook('s3cret', body, NOW_SEC - 301), rawBody: body })).toBe(false);
    expect(adapter.verifyWebhook({ headers: signSimWebhook('s3cret', body, NOW_SEC + 301), rawBody: body })).toBe(false);
    expect(adapter.verifyWebhook({ headers: { ...headers, 'x-sim-timestamp': String(NOW_SEC + 1) }, rawBody: body })).toBe(false);
    expect(adapter.verifyWebhook({ headers: { 'x-sim-timestamp': String(NOW_SEC) }, rawBody: body })).toBe(false);
    expect(adapter.verifyWebhook({ headers: { ...headers, 'x-sim-signature': 'v1=abc' }, rawBody: body })).toBe(false);
  });

  it('accepts any of several signatures (secret rotation) and headers in any case', () => {
    const current = signSimWebhook('s3cret', body, NOW_SEC);
    const previous = signSimWebhook('old', body, NOW_SEC);
    const headers = {
      'X-Sim-Timestamp': current['x-sim-timestamp'],
      'X-Sim-Signature': `${previous['x-sim-signature']} ${current['x-sim-signature']}`,
    };
    expect(verifySimSignature({ secret: 's3cret', headers, rawBody: body, nowMs: NOW_MS })).toBe(true);
  });
});
