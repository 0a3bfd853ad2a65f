/**
 * The provider webhooks (`/v1/providers/:name/inbound/sms|voice`, `/status`) as a vendor meets them: a
 * webhook that does not verify is 401/403 and nothing is relayed; the answer is the provider's own document;
 * a body the adapter cannot read is a 400 naming the field. The adapter's webhook side and the relay are
 * scripted here; each adapter's verification and parsing have specs of their own beside it.
 */
import { jest } from '@jest/globals';
import { InvalidWebhookError, type InboundEvent, type StatusEvent, type WebhookAnswer, type WebhookRequest } from '@app/cpaas';
import { controllerSetup, expectInvalidFields, expectProblem, type ControllerContext } from '../../../../test/support/controller-context';
import type { ProviderWebhooks } from '../providers/provider-adapters';
import { ProviderRegistry } from '../providers/provider-registry';
import { InboundController } from './inbound.controller';
import { RelayService } from './relay.service';

const PUBLIC_URL = 'https://broker.example.com';
const SMS: InboundEvent = {
  channel: 'sms',
  eventId: 'ev-1',
  messageId: 'SM1',
  from: '+2348030000001',
  to: '+2349010000001',
  text: 'at the gate',
  at: '2026-07-15T12:00:00.000Z',
};
const DELIVERED: StatusEvent = {
  type: 'message.delivered',
  eventId: 'ev-2',
  messageId: 'SM2',
  from: '+2349010000001',
  to: '+2348030000002',
  at: '2026-07-15T12:00:01.000Z',
};
const TWIML: WebhookAnswer = { status: 200, contentType: 'text/xml', body: '<Response/>' };

/** A provider's webhook side: the signature is what the `x-test-signature` header says. */
function scriptedProvider() {
  const seen: WebhookRequest[] = [];
  const provider = {
    name: 'primary',
    verifyWebhook: jest.fn((req: WebhookRequest) => {
      seen.push(req);
      const given = req.headers['x-test-signature'];
      return given === undefined ? 'missing' : given === 'good' ? 'valid' : 'invalid';
    }),
    parseInbound: jest.fn((_channel: 'sms' | 'voice', _req: WebhookRequest): InboundEvent => SMS),
    parseStatus: jest.fn((_req: WebhookRequest): StatusEvent => DELIVERED),
    statusAnswer: jest.fn((req: { matched: boolean }): WebhookAnswer => ({
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify(req),
    })),
    webhookRoute: undefined as ProviderWebhooks['webhookRoute'],
  };
  return { provider, seen };
}

describe('InboundController', () => {
  let scripted: ReturnType<typeof scriptedProvider>;
  const registry = { has: (name: string) => name === 'primary', webhooks: () => scripted.provider as unknown as ProviderWebhooks };
  const relay = { inbound: jest.fn<RelayService['inbound']>(), status: jest.fn<RelayService['status']>() };
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([InboundController], {
      providers: [
        { provide: ProviderRegistry, useValue: registry },
        { provide: RelayService, useValue: relay },
      ],
      env: { PUBLIC_URL },
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    scripted = scriptedProvider();
    relay.inbound.mockReset().mockResolvedValue({ kind: 'answer', answer: TWIML });
    relay.status.mockReset().mockResolvedValue(true);
  });

  const post = (path: string, signature?: string) => {
    const req = ctx.http().post(path).type('form');
    return (signature === undefined ? req : req.set('x-test-signature', signature)).send('From=%2B2348030000001&Body=at+the+gate');
  };

  describe.each(['/v1/providers/primary/inbound/sms', '/v1/providers/primary/inbound/voice', '/v1/providers/primary/status'])(
    '%s',
    (path) => {
      it('without a signature is 401, and nothing is read or relayed', async () => {
        expectProblem(await post(path), 401, '/problems/missing-signature');
        expect(scripted.provider.parseInbound).not.toHaveBeenCalled();
        expect(scripted.provider.parseStatus).not.toHaveBeenCalled();
        expect([relay.inbound, relay.status].every((m) => m.mock.calls.length === 0)).toBe(true);
      });

      it('with a signature that does not verify is 403, and nothing is relayed', async () => {
        expectProblem(await post(path, 'forged'), 403, '/problems/invalid-signature');
        expect([relay.inbound, relay.status].every((m) => m.mock.calls.length === 0)).toBe(true);
      });

      it('is verified over the exact bytes received and the URL the vendor called (PUBLIC_URL + path + query)', async () => {
        await ctx.http().post(`${path}?attempt=2`).type('form').set('x-test-signature', 'good').send('B=2&A=1').expect(200);
        expect(scripted.seen).toHaveLength(1);
        expect(scripted.seen[0].url).toBe(`${PUBLIC_URL}${path}?attempt=2`);
        expect(scripted.seen[0].rawBody.toString()).toBe('B=2&A=1');
        expect(scripted.seen[0].method).toBe('POST');
      });
    },
  );

  it('an unknown provider is 404 whatever its signature', async () => {
    expectProblem(await post('/v1/providers/elsewhere/inbound/sms', 'good'), 404, '/problems/unknown-provider');
    expect(scripted.provider.verifyWebhook).not.toHaveBeenCalled();
  });

  it('a verified inbound SMS is relayed for that provider and answered with the provider’s own document', async () => {
    const res = await post('/v1/providers/primary/inbound/sms', 'good');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/xml');
    expect(res.text).toBe('<Response/>');
    expect(scripted.provider.parseInbound).toHaveBeenCalledWith('sms', expect.objectContaining({ route: 'inbound/sms' }));
    expect(relay.inbound).toHaveBeenCalledWith('primary', SMS);
  });

  it('a verified inbound call is read as a call', async () => {
    await post('/v1/providers/primary/inbound/voice', 'good').expect(200);
    expect(scripted.provider.parseInbound).toHaveBeenCalledWith('voice', expect.objectContaining({ route: 'inbound/voice' }));
  });

  it.each([
    [{ kind: 'not-our-number' as const }, 404, '/problems/unknown-proxy-number'],
    [{ kind: 'no-session' as const }, 404, '/problems/no-active-session'],
  ])('a relay answer %j is %i', async (answer, status, type) => {
    relay.inbound.mockResolvedValue(answer);
    expectProblem(await post('/v1/providers/primary/inbound/sms', 'good'), status, type);
  });

  it('a session past its relay rate is 429 with Retry-After in whole seconds', async () => {
    relay.inbound.mockResolvedValue({ kind: 'rate-limited', retryAfterMs: 1_500 });
    const res = await post('/v1/providers/primary/inbound/sms', 'good');
    expectProblem(res, 429, '/problems/rate-limited');
    expect(res.headers['retry-after']).toBe('2');
  });

  it('a verified body the adapter cannot read is 400 naming the field, and nothing is relayed', async () => {
    scripted.provider.parseInbound.mockImplementation(() => {
      throw new InvalidWebhookError('From must be a phone number', 'From');
    });
    const res = await post('/v1/providers/primary/inbound/sms', 'good');
    expectInvalidFields(res, ['From']);
    expect(relay.inbound).not.toHaveBeenCalled();
  });

  it('a verified status is recorded and answered with whether it matched', async () => {
    relay.status.mockResolvedValue(false);
    const res = await post('/v1/providers/primary/status', 'good');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ matched: false });
    expect(relay.status).toHaveBeenCalledWith('primary', DELIVERED);
  });

  it('a call’s end posted to the voice URL (as some vendors do) is read as a status, not as a new call', async () => {
    scripted.provider.webhookRoute = (req: WebhookRequest) => (req.route === 'inbound/voice' ? 'status' : req.route);
    const res = await post('/v1/providers/primary/inbound/voice', 'good');
    expect(res.body).toEqual({ matched: true });
    expect(relay.status).toHaveBeenCalledWith('primary', DELIVERED);
    expect(relay.inbound).not.toHaveBeenCalled();
  });

  it('a body over the unauthenticated limit (64 KB) is 413 before any verification', async () => {
    const res = await ctx
      .http()
      .post('/v1/providers/primary/inbound/sms')
      .type('form')
      .set('x-test-signature', 'good')
      .send(`Body=${'x'.repeat(64 * 1024)}`);
    expectProblem(res, 413);
    expect(scripted.provider.verifyWebhook).not.toHaveBeenCalled();
  });
});

describe('InboundController without PUBLIC_URL (a provider that calls the broker directly: the simulator)', () => {
  const seen: WebhookRequest[] = [];
  const provider = {
    verifyWebhook: (req: WebhookRequest) => (seen.push(req), 'invalid' as const),
  };
  let ctx: ControllerContext;
  beforeAll(async () => {
    ctx = await controllerSetup([InboundController], {
      providers: [
        { provide: ProviderRegistry, useValue: { has: () => true, webhooks: () => provider } },
        { provide: RelayService, useValue: {} },
      ],
    });
  });
  afterAll(() => ctx.close());

  it('the URL is the broker’s origin as the request reached it; a Host that is not a plain host and port counts for nothing', async () => {
    await ctx.http().post('/v1/providers/primary/inbound/sms').set('host', 'broker.local:3000').send({}).expect(403);
    await ctx.http().post('/v1/providers/primary/inbound/sms').set('host', 'evil.example/path?').send({}).expect(403);
    expect(seen.map((r) => r.url)).toEqual([
      'http://broker.local:3000/v1/providers/primary/inbound/sms',
      'http://localhost/v1/providers/primary/inbound/sms',
    ]);
  });
});
