/**
 * Expiry as relay routing sees it, on the broker's one clock (CLOCK), before any sweep: a session is inactive
 * from its expiresAt on, and with `idleTtlSeconds` from its last interaction plus that long (never past
 * expiresAt), on every replica. Each boundary is tested on both sides: 1 ms before it a call is bridged or a
 * text relayed; at it, the sender gets the out-of-session answer and nothing is relayed.
 */
import type { Clock } from '@app/clock';
import { signSimWebhook } from '@app/cpaas';
import { Client } from 'pg';
import request from 'supertest';
import { CLOCK } from '../apps/broker/src/common/clock';
import { SessionSweeper } from '../apps/broker/src/sessions/session-sweeper';
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { TEST_WEBHOOK_SECRET, startBroker, type BrokerHarness } from './support/broker-harness';
import { clearSimCalls, simCalls, simInbound } from './support/sim-control';

const SECOND = 1_000;
const ENV = {
  ...AUTH_ENV,
  // No sweep runs unless a test asks: what is checked is the state between a deadline and the sweeper.
  SESSION_SWEEP_INTERVAL_MS: '3600000',
  RELAY_RETRY_INTERVAL_MS: '3600000',
  BREAKER_HEALTH_INTERVAL_MS: '3600000',
};

describe('expiry in relay routing, before the sweeper runs', () => {
  let broker: BrokerHarness;
  let clock: Clock;
  let wallNow: Clock['now'];
  let db: Client;

  beforeAll(async () => {
    broker = await startBroker(ENV);
    clock = broker.app.get<Clock>(CLOCK);
    wallNow = clock.now;
    db = new Client(broker.db.url);
    await db.connect();
  });
  afterEach(() => {
    clock.now = wallNow;
  });
  afterAll(async () => {
    await db.end();
    await broker.close();
  });

  const at = (ms: number) => {
    clock.now = () => ms;
  };
  const read = async (id: string) =>
    (await request(broker.url).get(`/v1/sessions/${id}`).set('authorization', `Bearer ${API_KEY}`).expect(200)).body;
  const list = async (status: string) =>
    (
      (await request(broker.url).get(`/v1/sessions?status=${status}&limit=100`).set('authorization', `Bearer ${API_KEY}`).expect(200)).body
        .sessions as Array<{ id: string }>
    ).map((s) => s.id);
  const interactions = async (id: string) =>
    (await request(broker.url).get(`/v1/sessions/${id}/interactions`).set('authorization', `Bearer ${API_KEY}`).expect(200)).body
      .interactions as Array<{ channel: string; status: string }>;

  it('bridges a call into a voice session 1 ms before its expiresAt, and not from its expiresAt on (ttl)', async () => {
    const [caller, callee] = freshPair();
    const session = (await createSession(broker.url, sessionBody([caller, callee], { channel: 'voice', ttlSeconds: 60 })).expect(201)).body;
    const expiresAt = Date.parse(session.expiresAt);
    await clearSimCalls(broker.sim.url, 'primary');

    at(expiresAt - 1);
    const bridged = await simInbound(broker.sim.url, 'primary', { channel: 'voice', from: caller, to: session.proxyNumber });
    expect(bridged.body).toEqual({ action: 'bridge', to: callee, callerId: session.proxyNumber });

    at(expiresAt);
    const refused = await simInbound(broker.sim.url, 'primary', { channel: 'voice', from: caller, to: session.proxyNumber });
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ type: '/problems/no-active-session' });
    expect(await simCalls(broker.sim.url, 'primary', 'call')).toHaveLength(1);
    expect(await interactions(session.id)).toHaveLength(1);
    expect(await read(session.id)).toMatchObject({ status: 'expired', expiredReason: 'ttl' });
  });

  it('relays a text 1 ms before its expiresAt, and not from its expiresAt on (ttl)', async () => {
    const [rider, driver] = freshPair();
    const session = (await createSession(broker.url, sessionBody([rider, driver], { ttlSeconds: 60 })).expect(201)).body;
    const expiresAt = Date.parse(session.expiresAt);
    await clearSimCalls(broker.sim.url, 'primary');

    at(expiresAt - 1);
    expect(
      (await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'a' })).body,
    ).toMatchObject({
      result: 'relayed',
    });
    at(expiresAt);
    expect((await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'b' })).status).toBe(
      404,
    );
    expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([expect.objectContaining({ text: 'a' })]);
  });

  it('expires a session idleTtlSeconds after its last interaction, each interaction moving the deadline, before any sweep', async () => {
    const [rider, driver] = freshPair();
    const session = (
      await createSession(
        broker.url,
        sessionBody([rider, driver], { channel: undefined, channels: ['voice', 'sms'], idleTtlSeconds: 120, ttlSeconds: 3600 }),
      ).expect(201)
    ).body;
    expect(session).toMatchObject({ idleTtlSeconds: 120, lastInteractionAt: null });
    const created = Date.parse(session.createdAt);
    await clearSimCalls(broker.sim.url, 'primary');

    // From its creation: still live 1 ms before created + 120 s; a text then moves the deadline on.
    const firstText = created + 120 * SECOND - 1;
    at(firstText);
    expect(await read(session.id)).toMatchObject({ status: 'active' });
    const text = await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'here' });
    expect(text.body).toMatchObject({ result: 'relayed' });
    expect((await read(session.id)).lastInteractionAt).toBe(new Date(firstText).toISOString());

    // 1 ms before its new deadline a call is bridged (and moves it again).
    const call = firstText + 120 * SECOND - 1;
    at(call);
    const bridged = await simInbound(broker.sim.url, 'primary', { channel: 'voice', from: driver, to: session.proxyNumber });
    expect(bridged.body).toEqual({ action: 'bridge', to: rider, callerId: session.proxyNumber });

    // At the deadline the last interaction set, nothing more is relayed, and it reads expired for idleness.
    const deadline = call + 120 * SECOND;
    at(deadline - 1);
    expect(await read(session.id)).toMatchObject({ status: 'active', expiredReason: null });
    expect(await list('active')).toContain(session.id);
    at(deadline);
    const late = await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'late' });
    expect(late.status).toBe(404);
    expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([expect.objectContaining({ text: 'here' })]);
    expect(await read(session.id)).toMatchObject({ status: 'expired', expiredReason: 'idle' });
    expect(await list('active')).not.toContain(session.id);
    expect(await list('expired')).toContain(session.id);
    // A message from the app is refused too.
    await request(broker.url)
      .post(`/v1/sessions/${session.id}/messages`)
      .set('authorization', `Bearer ${API_KEY}`)
      .send({ to: rider, text: 'still there?' })
      .expect(409);

    // The sweeper, on the same clock, marks it expired for idleness, and says why in session.expired.
    await broker.app.get(SessionSweeper).sweep();
    const { rows } = await db.query('SELECT status, expired_reason FROM sessions WHERE id = $1', [session.id]);
    expect(rows[0]).toEqual({ status: 'expired', expired_reason: 'idle' });
    const events = (await request(broker.url).get(`/v1/events?session=${session.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200))
      .body.events as Array<{ type: string; data: { session?: { expiredReason: string } } }>;
    expect(events.find((e) => e.type === 'session.expired')?.data.session?.expiredReason).toBe('idle');
  });

  it('never lets an interaction move the idle deadline past expiresAt: the hard limit still ends it, as ttl', async () => {
    const [rider, driver] = freshPair();
    const session = (await createSession(broker.url, sessionBody([rider, driver], { idleTtlSeconds: 120, ttlSeconds: 200 })).expect(201))
      .body;
    const expiresAt = Date.parse(session.expiresAt);
    at(expiresAt - 100 * SECOND);
    expect(
      (await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'a' })).body,
    ).toMatchObject({
      result: 'relayed',
    });
    at(expiresAt - 1);
    expect(
      (await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: driver, to: session.proxyNumber, text: 'b' })).body,
    ).toMatchObject({
      result: 'relayed',
    });
    at(expiresAt);
    expect((await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'c' })).status).toBe(
      404,
    );
    expect(await read(session.id)).toMatchObject({ status: 'expired', expiredReason: 'ttl' });
  });

  it('frees an idle-expired session’s participants on its number for a new session at once, unswept', async () => {
    const pair = freshPair();
    const session = (await createSession(broker.url, sessionBody(pair, { idleTtlSeconds: 60 })).expect(201)).body;
    await db.query('UPDATE proxy_numbers SET enabled = false WHERE number <> $1', [session.proxyNumber]);
    try {
      at(Date.parse(session.createdAt) + 60 * SECOND - 1);
      const refused = await createSession(broker.url, sessionBody(pair)).expect(503);
      expect(refused.body).toMatchObject({ type: '/problems/pool-exhausted' });
      at(Date.parse(session.createdAt) + 60 * SECOND);
      const next = (await createSession(broker.url, sessionBody(pair)).expect(201)).body;
      expect(next.proxyNumber).toBe(session.proxyNumber);
    } finally {
      await db.query('UPDATE proxy_numbers SET enabled = true');
    }
  });

  it('refuses an idleTtlSeconds below 60 or above 7 days with a 400', async () => {
    for (const idleTtlSeconds of [59, 7 * 24 * 3600 + 1, 90.5, '120']) {
      const res = await createSession(broker.url, sessionBody(freshPair(), { idleTtlSeconds })).expect(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('idleTtlSeconds');
    }
  });

  describe('on every replica', () => {
    let other: BrokerHarness;
    let otherClock: Clock;
    let otherNow: Clock['now'];

    beforeAll(async () => {
      other = await startBroker(ENV, { db: broker.db, sim: broker.sim });
      broker.sim.config.brokerUrl = broker.url;
      otherClock = other.app.get<Clock>(CLOCK);
      otherNow = otherClock.now;
    });
    afterEach(() => {
      otherClock.now = otherNow;
    });
    afterAll(async () => {
      await other.close();
    });

    /** An inbound text webhook, signed as the simulator signs it, posted to `to` (one replica or the other). */
    const text = (target: BrokerHarness, from: string, proxyNumber: string, n: number) => {
      const body = JSON.stringify({
        eventId: `evt-replica-${n}`,
        messageId: `m-replica-${n}`,
        from,
        to: proxyNumber,
        text: `t${n}`,
        at: new Date().toISOString(),
      });
      const route = { provider: 'primary', method: 'POST', path: '/v1/providers/primary/inbound/sms' };
      return request(target.url)
        .post(route.path)
        .set(signSimWebhook(TEST_WEBHOOK_SECRET, route, body, Math.floor(Date.now() / 1000)))
        .set('content-type', 'application/json')
        .send(body);
    };

    it('holds the deadline one replica’s interaction set on the other, before any sweep', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, sessionBody([rider, driver], { idleTtlSeconds: 120 })).expect(201)).body;
      const created = Date.parse(session.createdAt);

      // A text through this replica at created + 100 s moves the deadline to created + 220 s, for both.
      at(created + 100 * SECOND);
      expect((await text(broker, rider, session.proxyNumber, 1).expect(200)).body).toMatchObject({ result: 'relayed' });

      otherClock.now = () => created + 220 * SECOND - 1;
      expect((await text(other, driver, session.proxyNumber, 2).expect(200)).body).toMatchObject({ result: 'relayed' });
      // That one moved it again, to created + 340 s - 1 ms: this replica sees it too.
      at(created + 340 * SECOND - 2);
      expect((await text(broker, rider, session.proxyNumber, 3).expect(200)).body).toMatchObject({ result: 'relayed' });
      otherClock.now = () => created + 460 * SECOND - 2;
      expect((await text(other, rider, session.proxyNumber, 4)).status).toBe(404);
      at(created + 460 * SECOND - 3);
      expect(await read(session.id)).toMatchObject({ status: 'active' });
    });
  });
});
