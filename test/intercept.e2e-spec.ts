/**
 * The intercept end to end on the simulator: an account's intercept URL (or a session's own) is asked, signed,
 * before each relay and bridge; 2xx lets it through, 403 blocks it (a text recorded `blocked` and not relayed, a
 * call given the out-of-session answer), and no answer within INTERCEPT_TIMEOUT_MS, or any other answer, goes as
 * INTERCEPT_ON_ERROR says. The broker holds no database connection while it waits.
 */
import { verifyWebhook } from '@app/sdk';
import { WebhookReceiver } from '@app/testing';
import request from 'supertest';
import { API_KEY, AUTH_ENV, OTHER_API_KEY, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { clearSimCalls, simCalls, simInbound } from './support/sim-control';

const ENV = {
  ...AUTH_ENV,
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  SESSION_SWEEP_INTERVAL_MS: '3600000',
  RELAY_RETRY_INTERVAL_MS: '3600000',
  BREAKER_HEALTH_INTERVAL_MS: '3600000',
  // Long enough that a local receiver's answer is never late on a loaded machine; short enough for the tests that wait it out.
  INTERCEPT_TIMEOUT_MS: '1500',
};

interface InterceptBody {
  id: string;
  type: string;
  timestamp: string;
  data: {
    session: { id: string; channels: string[]; proxyNumber: string };
    interaction: { id: string; channel: string; from: string; to: string; text?: string; createdAt: string };
  };
}

function harness(env: Record<string, string>) {
  const state: { broker: BrokerHarness; receiver: WebhookReceiver; secret: string } = {} as never;
  beforeAll(async () => {
    state.broker = await startBroker({ ...ENV, ...env });
    state.receiver = await WebhookReceiver.start();
    // The account's signing secret, shown once by the rotation that makes it.
    state.secret = (
      await request(state.broker.url).post('/v1/account/webhook-secret/rotate').set('authorization', `Bearer ${API_KEY}`).expect(200)
    ).body.secret;
  });
  afterEach(() => {
    state.receiver.answer = () => ({ status: 200 });
  });
  afterAll(async () => {
    await state.receiver?.close();
    await state.broker?.close();
  });
  return state;
}

const api = (broker: BrokerHarness, key = API_KEY) => ({
  get: (path: string) => request(broker.url).get(path).set('authorization', `Bearer ${key}`),
  put: (path: string, body: unknown) =>
    request(broker.url)
      .put(path)
      .set('authorization', `Bearer ${key}`)
      .send(body as object),
});
const interactions = async (broker: BrokerHarness, id: string) =>
  (await api(broker).get(`/v1/sessions/${id}/interactions`).expect(200)).body.interactions as Array<{
    id: string;
    channel: string;
    status: string;
  }>;
const events = async (broker: BrokerHarness, id: string) =>
  (await api(broker).get(`/v1/events?session=${id}`).expect(200)).body.events as Array<{ type: string; data: Record<string, unknown> }>;
const conversation = (broker: BrokerHarness, extra: Record<string, unknown> = {}) =>
  createSession(broker.url, sessionBody(freshPair(), { channel: undefined, channels: ['voice', 'sms'], ...extra })).expect(201);

describe('intercept, INTERCEPT_ON_ERROR=allow', () => {
  const t = harness({});

  beforeAll(async () => {
    await api(t.broker).put('/v1/account/intercept-url', { interceptUrl: t.receiver.url }).expect(200);
  });

  it('keeps the account’s intercept URL: set, read, cleared; another account has its own', async () => {
    expect((await api(t.broker).get('/v1/account/intercept-url').expect(200)).body).toEqual({ interceptUrl: t.receiver.url });
    expect((await api(t.broker, OTHER_API_KEY).get('/v1/account/intercept-url').expect(200)).body).toEqual({ interceptUrl: null });
    expect((await api(t.broker, OTHER_API_KEY).put('/v1/account/intercept-url', { interceptUrl: null }).expect(200)).body).toEqual({
      interceptUrl: null,
    });
    await request(t.broker.url).get('/v1/account/intercept-url').expect(401);
  });

  it.each([
    ['a well-known port', 'http://127.0.0.1:22/hook', /port/],
    ['credentials', 'https://user:pw@example.com/hook', /credentials/],
    ['another scheme', 'ftp://example.com/hook', /http/],
    ['not a URL', 'intercept me', /http/],
  ])('refuses an intercept URL with %s, for the account and for a session, with a 400 naming it', async (_what, url, message) => {
    const account = await api(t.broker).put('/v1/account/intercept-url', { interceptUrl: url }).expect(400);
    expect(account.body.errors).toEqual([{ field: 'interceptUrl', message: expect.stringMatching(message) }]);
    const session = await createSession(t.broker.url, sessionBody(freshPair(), { interceptUrl: url })).expect(400);
    expect(session.body.errors).toEqual([{ field: 'interceptUrl', message: expect.stringMatching(message) }]);
    await api(t.broker)
      .put('/v1/account/intercept-url', { interceptUrl: 'x'.repeat(2049) })
      .expect(400);
    expect((await api(t.broker).get('/v1/account/intercept-url').expect(200)).body).toEqual({ interceptUrl: t.receiver.url });
  });

  it('asks before the relay and the bridge, signed, with the session and the interaction; a 2xx lets each through', async () => {
    const session = (await conversation(t.broker)).body;
    const [rider, driver] = session.participants.map((p: { number: string }) => p.number);
    await clearSimCalls(t.broker.sim.url, 'primary');
    const before = t.receiver.received.length;
    t.receiver.answer = () => ({ status: 204 });

    const text = await simInbound(t.broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'gate 4' });
    expect(text.body).toMatchObject({ result: 'relayed' });
    const call = await simInbound(t.broker.sim.url, 'primary', { channel: 'voice', from: driver, to: session.proxyNumber });
    expect(call.body).toEqual({ action: 'bridge', to: rider, callerId: session.proxyNumber });

    const asked = t.receiver.received
      .slice(before)
      .map((r) => verifyWebhook<InterceptBody>({ payload: r.body, headers: r.headers as Record<string, string>, secret: t.secret }));
    expect(asked.map((a) => a.body.type)).toEqual(['interaction.intercept', 'interaction.intercept']);
    expect(asked[0].body.data.session).toMatchObject({ id: session.id, channels: ['voice', 'sms'], proxyNumber: session.proxyNumber });
    expect(asked[0].body.data.interaction).toMatchObject({ channel: 'sms', from: rider, to: driver, text: 'gate 4' });
    expect(asked[1].body.data.interaction).toMatchObject({ channel: 'voice', from: driver, to: rider });
    expect(asked[1].body.data.interaction.text).toBeUndefined();
    // The interaction it asked about is the one recorded.
    expect((await interactions(t.broker, session.id)).map((i) => i.id)).toEqual(asked.map((a) => a.id));
  });

  it('blocks a text the intercept refuses with 403: not relayed, listed as blocked, and an event says why', async () => {
    const session = (await conversation(t.broker)).body;
    const [rider] = session.participants.map((p: { number: string }) => p.number);
    await clearSimCalls(t.broker.sim.url, 'primary');
    t.receiver.answer = () => ({ status: 403 });

    const text = await simInbound(t.broker.sim.url, 'primary', {
      channel: 'sms',
      from: rider,
      to: session.proxyNumber,
      text: 'my number is …',
    });
    expect(text.status).toBe(200);
    expect(await simCalls(t.broker.sim.url, 'primary', 'sms')).toEqual([]);
    expect(await interactions(t.broker, session.id)).toEqual([expect.objectContaining({ channel: 'sms', status: 'blocked' })]);
    const blocked = (await events(t.broker, session.id)).find((e) => e.type === 'interaction.blocked');
    expect(blocked?.data).toMatchObject({
      sessionId: session.id,
      channel: 'sms',
      from: rider,
      outcome: 'blocked',
      reason: expect.stringMatching(/403/),
    });
  });

  it('gives a call the intercept refuses the out-of-session answer, and bridges nothing', async () => {
    const session = (await conversation(t.broker)).body;
    const [, driver] = session.participants.map((p: { number: string }) => p.number);
    await clearSimCalls(t.broker.sim.url, 'primary');
    t.receiver.answer = () => ({ status: 403 });

    const call = await simInbound(t.broker.sim.url, 'primary', { channel: 'voice', from: driver, to: session.proxyNumber });
    expect(call.status).toBe(404);
    expect(await simCalls(t.broker.sim.url, 'primary', 'call')).toEqual([]);
    expect(await interactions(t.broker, session.id)).toEqual([expect.objectContaining({ channel: 'voice', status: 'blocked' })]);
  });

  it('relays a text whose intercept never answers once INTERCEPT_TIMEOUT_MS has passed (INTERCEPT_ON_ERROR=allow), and counts it', async () => {
    const session = (await conversation(t.broker)).body;
    const [rider, driver] = session.participants.map((p: { number: string }) => p.number);
    await clearSimCalls(t.broker.sim.url, 'primary');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    t.receiver.answer = async () => {
      await held;
      return { status: 403 };
    };
    try {
      const text = await simInbound(t.broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'late ok' });
      // Answered while the intercept still holds the request.
      expect(t.receiver.inFlight).toBe(1);
      expect(text.body).toMatchObject({ result: 'relayed' });
    } finally {
      release();
    }
    expect(await simCalls(t.broker.sim.url, 'primary', 'sms')).toEqual([expect.objectContaining({ to: driver, text: 'late ok' })]);
    const metrics = (await request(t.broker.url).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/broker_intercept_requests_total\{outcome="timeout",decision="allow"\} [1-9]/);
    expect(metrics).toMatch(/broker_intercept_duration_seconds_bucket\{le="[^"]+",outcome="allowed"\} \d/);
    expect(metrics).toContain('broker_limit{limit="intercept_timeout_ms"} 1500');
  });

  it('asks the session’s own interceptUrl instead of the account’s', async () => {
    const own = await WebhookReceiver.start();
    try {
      own.answer = () => ({ status: 403 });
      const session = (await conversation(t.broker, { interceptUrl: own.url })).body;
      expect(session.interceptUrl).toBe(own.url);
      const before = t.receiver.received.length;
      const [rider] = session.participants.map((p: { number: string }) => p.number);
      await simInbound(t.broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'x' });
      expect(own.received).toHaveLength(1);
      expect(t.receiver.received.length).toBe(before);
      expect(await interactions(t.broker, session.id)).toEqual([expect.objectContaining({ status: 'blocked' })]);
    } finally {
      await own.close();
    }
  });

  it('asks nothing for an account without an intercept URL', async () => {
    const session = (await createSession(t.broker.url, sessionBody(freshPair()), OTHER_API_KEY).expect(201)).body;
    const before = t.receiver.received.length;
    const text = await simInbound(t.broker.sim.url, 'primary', {
      channel: 'sms',
      from: session.participants[0].number,
      to: session.proxyNumber,
      text: 'x',
    });
    expect(text.body).toMatchObject({ result: 'relayed' });
    expect(t.receiver.received.length).toBe(before);
  });
});

describe('intercept, INTERCEPT_ON_ERROR=block', () => {
  const t = harness({ INTERCEPT_ON_ERROR: 'block' });

  beforeAll(async () => {
    await api(t.broker).put('/v1/account/intercept-url', { interceptUrl: t.receiver.url }).expect(200);
  });

  it('blocks a text whose intercept never answers, once INTERCEPT_TIMEOUT_MS has passed', async () => {
    const session = (await conversation(t.broker)).body;
    await clearSimCalls(t.broker.sim.url, 'primary');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    t.receiver.answer = async () => {
      await held;
      return { status: 200 };
    };
    try {
      const text = await simInbound(t.broker.sim.url, 'primary', {
        channel: 'sms',
        from: session.participants[0].number,
        to: session.proxyNumber,
        text: 'held',
      });
      expect(t.receiver.inFlight).toBe(1);
      expect(text.status).toBe(200);
    } finally {
      release();
    }
    expect(await simCalls(t.broker.sim.url, 'primary', 'sms')).toEqual([]);
    expect(await interactions(t.broker, session.id)).toEqual([expect.objectContaining({ status: 'blocked' })]);
    const blocked = (await events(t.broker, session.id)).find((e) => e.type === 'interaction.blocked');
    expect(blocked?.data).toMatchObject({
      outcome: 'timeout',
      reason: expect.stringMatching(/no answer within 1500 ms.*INTERCEPT_ON_ERROR=block/),
    });
  });

  it('blocks a call whose intercept answers 500', async () => {
    const session = (await conversation(t.broker)).body;
    t.receiver.answer = () => ({ status: 500 });
    const call = await simInbound(t.broker.sim.url, 'primary', {
      channel: 'voice',
      from: session.participants[1].number,
      to: session.proxyNumber,
    });
    expect(call.status).toBe(404);
    expect(await interactions(t.broker, session.id)).toEqual([expect.objectContaining({ channel: 'voice', status: 'blocked' })]);
  });

  it('still lets a 2xx through', async () => {
    const session = (await conversation(t.broker)).body;
    t.receiver.answer = () => ({ status: 200 });
    const text = await simInbound(t.broker.sim.url, 'primary', {
      channel: 'sms',
      from: session.participants[0].number,
      to: session.proxyNumber,
      text: 'ok',
    });
    expect(text.body).toMatchObject({ result: 'relayed' });
  });
});

describe('intercept waits hold no database connection', () => {
  // Two connections in the pool, and an intercept that answers only when the test says.
  const t = harness({ DATABASE_POOL_SIZE: '2', INTERCEPT_TIMEOUT_MS: '30000' });

  it('has more inbound texts waiting on the intercept than the pool has connections, and still answers reads and creates', async () => {
    await api(t.broker).put('/v1/account/intercept-url', { interceptUrl: t.receiver.url }).expect(200);
    const sessions = await Promise.all(Array.from({ length: 4 }, async () => (await conversation(t.broker)).body));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    t.receiver.answer = async () => {
      await held;
      return { status: 204 };
    };
    const texts = sessions.map((s) =>
      simInbound(t.broker.sim.url, 'primary', { channel: 'sms', from: s.participants[0].number, to: s.proxyNumber, text: 'waiting' }),
    );
    try {
      // Four waits at once on a pool of two: each one asked with its lookup's connection back in the pool.
      await eventually(async () => t.receiver.inFlight === 4, 300, 50);
      await api(t.broker).get(`/v1/sessions/${sessions[0].id}`).expect(200);
      await createSession(t.broker.url, sessionBody(freshPair())).expect(201);
    } finally {
      release();
    }
    for (const answer of await Promise.all(texts)) expect(answer.body).toMatchObject({ result: 'relayed' });
  });
});
