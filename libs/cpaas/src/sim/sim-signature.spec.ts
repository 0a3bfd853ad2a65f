import type { WebhookRequest, WebhookRoute } from '../provider';
import { SimProviderAdapter } from './sim-provider.adapter';
import { signSimWebhook, verifySimSignature, type SimWebhookTarget } from './sim-signature';

const NOW_MS = Date.parse('2026-07-15T12:00:00Z');
const NOW_SEC = NOW_MS / 1000;
const body = Buffer.from('{"eventId":"evt_1","from":"+2348030000001"}');
const SMS: SimWebhookTarget = { provider: 'primary', method: 'POST', path: '/v1/providers/primary/inbound/sms' };

/** The webhook as the broker's controller hands it over, posted to `primary`'s `route` unless told otherwise. */
function webhook(
  headers: Record<string, string>,
  rawBody = body,
  route: WebhookRoute = 'inbound/sms',
  provider = 'primary',
): WebhookRequest {
  return { url: `https://broker.test/v1/providers/${provider}/${route}?x=1`, method: 'POST', route, headers, rawBody };
}

describe('sim webhook signatures', () => {
  const adapter = new SimProviderAdapter({
    name: 'primary',
    baseUrl: 'http://127.0.0.1:9',
    timeoutMs: 100,
    webhookSecret: 's3cret',
    clock: { now: () => NOW_MS },
  });
  afterAll(() => adapter.close());

  it('accepts a webhook signed with the secret for its provider and route, within the tolerance', () => {
    expect(adapter.verifyWebhook(webhook(signSimWebhook('s3cret', SMS, body, NOW_SEC)))).toBe('valid');
    expect(adapter.verifyWebhook(webhook(signSimWebhook('s3cret', SMS, body, NOW_SEC - 300)))).toBe('valid');
    expect(adapter.verifyWebhook(webhook(signSimWebhook('s3cret', SMS, body, NOW_SEC + 300)))).toBe('valid');
  });

  it('says missing when no signature header came at all', () => {
    expect(adapter.verifyWebhook(webhook({}))).toBe('missing');
    expect(adapter.verifyWebhook(webhook({ 'content-type': 'application/json' }))).toBe('missing');
  });

  it('refuses a tampered body, another secret, a stale or future timestamp, and half the headers as invalid', () => {
    const headers = signSimWebhook('s3cret', SMS, body, NOW_SEC);
    expect(adapter.verifyWebhook(webhook(headers, Buffer.from(body.toString().replace('0001', '0002'))))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook(signSimWebhook('other', SMS, body, NOW_SEC)))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook(signSimWebhook('s3cret', SMS, body, NOW_SEC - 301)))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook(signSimWebhook('s3cret', SMS, body, NOW_SEC + 301)))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook({ ...headers, 'x-sim-timestamp': String(NOW_SEC + 1) }))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook({ 'x-sim-timestamp': String(NOW_SEC) }))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook({ 'x-sim-signature': headers['x-sim-signature'] }))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook({ ...headers, 'x-sim-signature': 'v1=abc' }))).toBe('invalid');
  });

  it("refuses a signature made for another provider's or another route's webhook", () => {
    const forFailover = signSimWebhook(
      's3cret',
      { ...SMS, provider: 'failover', path: '/v1/providers/failover/inbound/sms' },
      body,
      NOW_SEC,
    );
    expect(adapter.verifyWebhook(webhook(forFailover))).toBe('invalid');
    // The same path claimed for another provider name is refused too: the name is signed on its own.
    expect(adapter.verifyWebhook(webhook(signSimWebhook('s3cret', { ...SMS, provider: 'failover' }, body, NOW_SEC)))).toBe('invalid');
    const forStatus = signSimWebhook('s3cret', { ...SMS, path: '/v1/providers/primary/status' }, body, NOW_SEC);
    expect(adapter.verifyWebhook(webhook(forStatus))).toBe('invalid');
    expect(adapter.verifyWebhook(webhook(forStatus, body, 'status'))).toBe('valid');
    expect(adapter.verifyWebhook(webhook(signSimWebhook('s3cret', { ...SMS, method: 'PUT' }, body, NOW_SEC)))).toBe('invalid');
  });

  it('accepts any of several signatures (secret rotation) and headers in any case', () => {
    const current = signSimWebhook('s3cret', SMS, body, NOW_SEC);
    const previous = signSimWebhook('old', SMS, body, NOW_SEC);
    const headers = {
      'X-Sim-Timestamp': current['x-sim-timestamp'],
      'X-Sim-Signature': `${previous['x-sim-signature']} ${current['x-sim-signature']}`,
    };
    expect(verifySimSignature({ secret: 's3cret', target: SMS, headers, rawBody: body, nowMs: NOW_MS })).toBe('valid');
  });
});
