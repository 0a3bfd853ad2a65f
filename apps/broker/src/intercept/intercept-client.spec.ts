/**
 * InterceptClient against a real HTTP endpoint on loopback: what each answer decides, the deadline
 * (INTERCEPT_TIMEOUT_MS) and INTERCEPT_ON_ERROR, the signature the receiver checks with the SDK, the address
 * rules checked again at send time, and the /metrics series. The signing secrets are a fixed list here; the
 * app's come from WebhookSecrets.
 */
import { verifyWebhook } from '@app/sdk';
import { WebhookReceiver } from '@app/testing';
import { loadConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';
import type { WebhookSecrets } from '../notifications';
import { InterceptClient, type InterceptQuestion } from './intercept-client';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const secrets = { signingSecrets: () => Promise.resolve([SECRET]) } as unknown as WebhookSecrets;

describe('InterceptClient', () => {
  let receiver: WebhookReceiver;
  const clients: InterceptClient[] = [];

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    receiver.answer = () => ({ status: 200 });
    await Promise.all(clients.splice(0).map((c) => c.onApplicationShutdown()));
  });
  afterAll(async () => {
    await receiver.close();
  });

  function client(env: Record<string, string> = {}): { intercept: InterceptClient; metrics: BrokerMetrics } {
    const metrics = new BrokerMetrics();
    // A deadline a loaded machine cannot miss by accident (a 200 ms one timed out a 204 in a whole-suite run);
    // the deadline's own tests set a short one.
    const config = loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', INTERCEPT_TIMEOUT_MS: '5000', ...env });
    const intercept = new InterceptClient(config, secrets, metrics, { now: () => Date.now() });
    clients.push(intercept);
    return { intercept, metrics };
  }
  const question = (id = 'b4a0c1a2-0000-8000-8000-000000000001'): InterceptQuestion => ({
    url: receiver.url,
    accountId: 'acct',
    id,
    data: { session: { id: 's1' }, interaction: { id, channel: 'sms', from: '+2348030000001', to: '+2348030000002', text: 'hi' } },
  });

  it('lets a 2xx through and blocks on a 403, whatever INTERCEPT_ON_ERROR says', async () => {
    const { intercept } = client({ INTERCEPT_ON_ERROR: 'block' });
    receiver.answer = () => ({ status: 204 });
    expect(await intercept.ask(question())).toEqual({ verdict: 'allow', outcome: 'allowed', detail: 'HTTP 204' });
    receiver.answer = () => ({ status: 403 });
    expect(await intercept.ask(question())).toEqual({ verdict: 'block', outcome: 'blocked', detail: 'HTTP 403' });
  });

  it.each([
    ['allow', 'allow'],
    ['block', 'block'],
  ] as const)('leaves any other answer to INTERCEPT_ON_ERROR=%s', async (onError, verdict) => {
    const { intercept } = client({ INTERCEPT_ON_ERROR: onError });
    for (const status of [401, 404, 500, 503]) {
      receiver.answer = () => ({ status });
      expect(await intercept.ask(question())).toEqual({ verdict, outcome: 'error', detail: `HTTP ${status}` });
    }
    // A redirect is not followed: it is an answer like any other that is neither 2xx nor 403.
    receiver.answer = () => ({ status: 302, headers: { location: 'http://example.com/' } });
    expect(await intercept.ask(question())).toMatchObject({ verdict, outcome: 'error' });
  });

  it.each([
    ['allow', 'allow'],
    ['block', 'block'],
  ] as const)(
    'decides by INTERCEPT_ON_ERROR=%s when no answer comes within INTERCEPT_TIMEOUT_MS, and does not wait on',
    async (onError, verdict) => {
      const { intercept, metrics } = client({ INTERCEPT_ON_ERROR: onError, INTERCEPT_TIMEOUT_MS: '200' });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      receiver.answer = async () => {
        await held;
        return { status: 200 };
      };
      const decision = await intercept.ask(question());
      // Answered while the endpoint still holds the request: the broker did not wait for it.
      expect(receiver.inFlight).toBe(1);
      release();
      expect(decision).toEqual({ verdict, outcome: 'timeout', detail: 'no answer within 200 ms' });
      const text = await metrics.registry.metrics();
      expect(text).toContain(`broker_intercept_requests_total{outcome="timeout",decision="${verdict}"} 1`);
      expect(text).toMatch(/broker_intercept_duration_seconds_count\{outcome="timeout"\} 1/);
    },
  );

  it('signs the request as every webhook is signed: the receiver verifies it with the SDK and reads the interaction', async () => {
    const { intercept } = client();
    const before = receiver.received.length;
    await intercept.ask(question('b4a0c1a2-0000-8000-8000-0000000000aa'));
    const [got] = receiver.received.slice(before);
    const verified = verifyWebhook<{ id: string; type: string; data: { interaction: { id: string; text: string } } }>({
      payload: got.body,
      headers: got.headers as Record<string, string>,
      secret: SECRET,
    });
    expect(verified.id).toBe('b4a0c1a2-0000-8000-8000-0000000000aa');
    expect(verified.body).toMatchObject({
      id: 'b4a0c1a2-0000-8000-8000-0000000000aa',
      type: 'interaction.intercept',
      data: { interaction: { id: 'b4a0c1a2-0000-8000-8000-0000000000aa', text: 'hi' } },
    });
    expect(got.headers['content-type']).toBe('application/json');
  });

  it('refuses a target that is not public unless private targets are allowed, at send time: nothing reaches it', async () => {
    const { intercept } = client({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', INTERCEPT_ON_ERROR: 'block' });
    const before = receiver.received.length;
    const decision = await intercept.ask(question());
    expect(decision).toMatchObject({ verdict: 'block', outcome: 'error', detail: expect.stringMatching(/refused: .*public address/) });
    expect(receiver.received.length).toBe(before);
  });

  it('counts each outcome with the decision taken', async () => {
    const { intercept, metrics } = client();
    receiver.answer = () => ({ status: 200 });
    await intercept.ask(question());
    receiver.answer = () => ({ status: 403 });
    await intercept.ask(question());
    receiver.answer = () => ({ status: 500 });
    await intercept.ask(question());
    const text = await metrics.registry.metrics();
    expect(text).toContain('broker_intercept_requests_total{outcome="allowed",decision="allow"} 1');
    expect(text).toContain('broker_intercept_requests_total{outcome="blocked",decision="block"} 1');
    expect(text).toContain('broker_intercept_requests_total{outcome="error",decision="allow"} 1');
    expect(text).toContain('broker_limit{limit="intercept_timeout_ms"} 5000');
  });
});
