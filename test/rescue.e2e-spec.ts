/**
 * Session rescue on the simulator (issue #36, docs/design.md#session-rescue), driven as the app, the phone users
 * and an outage would: one account opts in (PUT /v1/account/rescue, afterSeconds 60, a notice), another does not
 * (the seed behaviour, in the same run). The primary goes down and its breaker opens; before 60 s on the breakers'
 * clock nothing moves, after it every session of the first account moves to the failover with a new number
 * (`session.rebound` once each, its history in GET /v1/sessions/:id, the notice texted from the new number, the
 * relay that waited on the primary sent through the failover), one that no failover number can take stays
 * (`session.rescue_failed`), and the other account's stay on the primary. Once the primary is back, a text to an
 * old number gets the out-of-session answer and an event, never a relay, and the old bindings are released.
 *
 * The breakers' time is moved (advanceBreakerTime) and the rescue, health checks and relay retries are run by the
 * test; every other wait is for an event, bounded in attempts.
 */
import request from 'supertest';
import { WebhookReceiver } from '@app/testing';
import { withClient } from '../bench/support/pool-rule';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { SessionRescue } from '../apps/broker/src/rescue/session-rescue';
import { API_KEY, AUTH_ENV, OTHER_API_KEY, createSession, sessionBody } from './support/api-client';
import { advanceBreakerTime } from './support/breaker-time';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault, simCalls, simInbound } from './support/sim-control';

const NOTICE = 'Our number changed: keep replying here to reach your driver.';

interface SessionView {
  id: string;
  provider: string;
  proxyNumber: string;
  channels: string[];
  participants: Array<{ number: string }>;
  numberHistory: Array<{ provider: string; proxyNumber: string; since: string; until: string | null }>;
}

interface EventBody {
  id: string;
  type: string;
  data: Record<string, unknown> & { session?: SessionView; sessionId?: string | null };
}

describe('session rescue on the simulator', () => {
  let broker: BrokerHarness;
  let receiver: WebhookReceiver;

  const api = (key = API_KEY) => ({
    get: (path: string) => request(broker.url).get(path).set('authorization', `Bearer ${key}`),
    put: (path: string, body: unknown) =>
      request(broker.url)
        .put(path)
        .set('authorization', `Bearer ${key}`)
        .send(body as object),
    post: (path: string, body: unknown) =>
      request(broker.url)
        .post(path)
        .set('authorization', `Bearer ${key}`)
        .send(body as object),
    delete: (path: string) => request(broker.url).delete(path).set('authorization', `Bearer ${key}`),
  });
  const session = async (id: string, key = API_KEY): Promise<SessionView> => (await api(key).get(`/v1/sessions/${id}`).expect(200)).body;
  const create = async (pair: [string, string], extra: Record<string, unknown> = {}, key = API_KEY): Promise<SessionView> =>
    (await createSession(broker.url, sessionBody(pair, extra), key).expect(201)).body;
  const delivered = (type: string, sessionId?: string): EventBody[] =>
    receiver.received
      .map((r) => JSON.parse(r.body) as EventBody)
      .filter((e) => e.type === type && (sessionId === undefined || (e.data.session?.id ?? e.data.sessionId) === sessionId));
  const sent = async (provider: string) => (await simCalls(broker.sim.url, provider, 'sms')).filter((c) => c.outcome === 'ok');
  const primaryState = async (): Promise<string> =>
    (await request(broker.url).get('/v1/health/cpaas').expect(200)).body.providers.find((p: { name: string }) => p.name === 'primary')
      .state;
  const rescue = () => broker.app.get(SessionRescue).runOnce();

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    broker = await startBroker({
      ...AUTH_ENV,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      // Three numbers per provider: one participant can fill the failover's.
      SIM_SEED_NUMBERS: '3',
      PROVIDER_CALL_TIMEOUT_MS: '1000',
      // The rescue, the health checks and the relay retries are run by the test.
      RESCUE_CHECK_INTERVAL_MS: '3600000',
      // 50 ms between moves: the pace is checked on what was settled.
      RESCUE_MOVES_PER_SECOND: '20',
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      RELAY_RETRY_INTERVAL_MS: '3600000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
    for (const key of [API_KEY, OTHER_API_KEY]) await api(key).put('/v1/account/callback-url', { callbackUrl: receiver.url }).expect(200);
  });
  afterAll(async () => {
    await broker?.close();
    await receiver?.close();
  });

  it('takes, shows and clears an account’s setting, refusing bad input with a 400 naming the field', async () => {
    expect((await api().get('/v1/account/rescue').expect(200)).body).toEqual({ enabled: false, afterSeconds: null, notice: null });
    expect((await api().put('/v1/account/rescue', { afterSeconds: 0 }).expect(200)).body).toEqual({
      enabled: true,
      afterSeconds: 0,
      notice: null,
    });
    for (const [body, field] of [
      [{ afterSeconds: -1 }, 'afterSeconds'],
      [{ afterSeconds: 604_801 }, 'afterSeconds'],
      [{ afterSeconds: 1.5 }, 'afterSeconds'],
      [{ afterSeconds: '60' }, 'afterSeconds'],
      [{}, 'afterSeconds'],
      [{ afterSeconds: 60, notice: '' }, 'notice'],
      [{ afterSeconds: 60, notice: '   ' }, 'notice'],
      [{ afterSeconds: 60, notice: 'x'.repeat(1601) }, 'notice'],
      [{ afterSeconds: 60, notice: 7 }, 'notice'],
      [{ afterSeconds: 60, after: 1 }, 'after'],
    ] as const) {
      const refused = await api().put('/v1/account/rescue', body).expect(400);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    // Refused bodies changed nothing.
    expect((await api().get('/v1/account/rescue').expect(200)).body).toEqual({ enabled: true, afterSeconds: 0, notice: null });
    expect((await api().delete('/v1/account/rescue').expect(200)).body).toEqual({ enabled: false, afterSeconds: null, notice: null });
    await request(broker.url).get('/v1/account/rescue').expect(401);

    expect((await api().put('/v1/account/rescue', { afterSeconds: 60, notice: NOTICE }).expect(200)).body).toEqual({
      enabled: true,
      afterSeconds: 60,
      notice: NOTICE,
    });
    // Per account: the other one is still off.
    expect((await api(OTHER_API_KEY).get('/v1/account/rescue').expect(200)).body.enabled).toBe(false);
  });

  it('moves the opted-in account’s sessions once the primary has been OPEN for afterSeconds, and only then; the other account’s stay', async () => {
    // The opted-in account: texts (one with a relay that will wait on the primary), a conversation, a voice-only
    // session (no notice), and one whose participant no failover number can take.
    const texts = await create(['+2348061000001', '+2348061000002']);
    const conversation = await create(['+2348061000003', '+2348061000004'], { channel: undefined, channels: ['voice', 'sms'] });
    const calls = await create(['+2348061000005', '+2348061000006'], { channel: 'voice' });
    const crowded = '+2348061000099';
    const stuck = await create([crowded, '+2348061000007']);
    // The account without rescue.
    const control = [
      await create(['+2348062000001', '+2348062000002'], {}, OTHER_API_KEY),
      await create(['+2348062000003', '+2348062000004'], {}, OTHER_API_KEY),
    ];
    for (const s of [texts, conversation, calls, stuck, ...control]) expect(s.provider).toBe('primary');
    expect(texts.numberHistory).toEqual([{ provider: 'primary', proxyNumber: texts.proxyNumber, since: expect.any(String), until: null }]);

    // The primary goes down: the rider's text waits for it (queued, retried durably).
    await setFault(broker.sim.url, 'primary', { mode: 'down' });
    const queued = await simInbound(broker.sim.url, 'primary', {
      channel: 'sms',
      from: '+2348061000001',
      to: texts.proxyNumber,
      text: 'at gate 4',
    });
    expect(queued.body).toMatchObject({ result: 'queued' });
    // So does a message from the app, from the proxy number.
    const fromApp = await api()
      .post(`/v1/sessions/${conversation.id}/messages`, { to: '+2348061000003', text: 'driver 2 min away' })
      .expect(202);
    expect(fromApp.body).toMatchObject({ from: conversation.proxyNumber, status: 'pending' });
    // Creates fail over (each bind on the primary a failure) until its breaker opens; the other account's crowd
    // the failover: the crowded participant is on each of its three numbers.
    for (const other of ['+2348063000001', '+2348063000002', '+2348063000003'])
      expect((await create([crowded, other], {}, OTHER_API_KEY)).provider).toBe('failover');
    await create(['+2348063000004', '+2348063000005'], {}, OTHER_API_KEY);
    await eventually(async () => (await primaryState()) === 'OPEN', 50);

    // 30 s into the outage (the breakers' clock): not due.
    advanceBreakerTime(broker, 30_000);
    await rescue();
    for (const s of [texts, conversation, calls, stuck]) expect((await session(s.id)).provider).toBe('primary');
    expect((await api().get(`/v1/events?session=${texts.id}`).expect(200)).body.events.map((e: { type: string }) => e.type)).not.toContain(
      'session.rebound',
    );

    // 60 s: due. Each moves to the failover with a new number, keeping its id, channels, expiry and metadata.
    advanceBreakerTime(broker, 30_000);
    await rescue();
    for (const before of [texts, conversation, calls]) {
      const after = await session(before.id);
      expect(after).toMatchObject({ id: before.id, provider: 'failover', channels: before.channels, participants: before.participants });
      expect(after).toMatchObject({ expiresAt: (before as unknown as { expiresAt: string }).expiresAt });
      expect(after.proxyNumber).not.toBe(before.proxyNumber);
      expect(after.numberHistory).toEqual([
        {
          provider: 'primary',
          proxyNumber: before.proxyNumber,
          since: (before as unknown as { createdAt: string }).createdAt,
          until: expect.any(String),
        },
        { provider: 'failover', proxyNumber: after.proxyNumber, since: after.numberHistory[0].until, until: null },
      ]);
    }
    // No failover number was free for the crowded participant: it stays, and the app is told why.
    expect((await session(stuck.id)).provider).toBe('primary');
    // The seed behaviour for the account without rescue.
    for (const s of control) expect((await session(s.id, OTHER_API_KEY)).provider).toBe('primary');

    const moved = { texts: await session(texts.id), conversation: await session(conversation.id), calls: await session(calls.id) };
    await eventually(async () => delivered('session.rebound').length >= 3 && delivered('session.rescue_failed').length >= 1);
    for (const s of Object.values(moved)) {
      const [rebound, ...again] = delivered('session.rebound', s.id);
      expect(again).toEqual([]);
      expect(rebound.data).toMatchObject({
        session: { id: s.id, provider: 'failover', proxyNumber: s.proxyNumber },
        from: { provider: 'primary', proxyNumber: s.numberHistory[0].proxyNumber },
        to: { provider: 'failover', proxyNumber: s.proxyNumber },
        reason: expect.stringMatching(/^primary has been OPEN since \S+Z \(primary: /),
      });
    }
    const [failed] = delivered('session.rescue_failed', stuck.id);
    expect(failed.data).toMatchObject({
      session: { id: stuck.id, provider: 'primary' },
      from: { provider: 'primary', proxyNumber: stuck.proxyNumber },
      reason: expect.stringContaining('failover: pool exhausted'),
    });
    for (const s of control) expect(delivered('session.rebound', s.id)).toEqual([]);

    // The notice went out from each new number to each participant of a session with texts; none to a voice-only one.
    const failoverSms = await sent('failover');
    const notices = (s: SessionView) => failoverSms.filter((c) => c.text === NOTICE && c.from === s.proxyNumber).map((c) => c.to);
    expect(notices(moved.texts).sort()).toEqual(['+2348061000001', '+2348061000002']);
    expect(notices(moved.conversation).sort()).toEqual(['+2348061000003', '+2348061000004']);
    expect(failoverSms.filter((c) => c.text === NOTICE && (c.to === '+2348061000005' || c.to === '+2348061000006'))).toEqual([]);
    // The relay that waited on the primary went out through the failover, from the new number.
    expect(failoverSms.filter((c) => c.text === 'at gate 4')).toEqual([
      expect.objectContaining({ from: moved.texts.proxyNumber, to: '+2348061000002' }),
    ]);
    const interactions = (await api().get(`/v1/sessions/${texts.id}/interactions`).expect(200)).body.interactions;
    const rows = interactions.map((i: { from: string; to: string; status: string }) => [i.from, i.to, i.status]);
    // The rider's text first; then the two notices, recorded as messages from the app (the new number) are.
    expect(rows[0]).toEqual(['+2348061000001', '+2348061000002', 'relayed']);
    expect(rows.slice(1).sort()).toEqual([
      [moved.texts.proxyNumber, '+2348061000001', 'relayed'],
      [moved.texts.proxyNumber, '+2348061000002', 'relayed'],
    ]);

    // The app's message went out from the new number too, and says so.
    expect((await sent('failover')).filter((c) => c.text === 'driver 2 min away')).toEqual([
      expect.objectContaining({ from: moved.conversation.proxyNumber, to: '+2348061000003' }),
    ]);
    const appMessage = (await api().get(`/v1/sessions/${conversation.id}/interactions`).expect(200)).body.interactions.find(
      (i: { id: string }) => i.id === fromApp.body.id,
    );
    expect(appMessage).toMatchObject({ from: moved.conversation.proxyNumber, status: 'relayed' });

    // A text to the new number is relayed through the failover.
    const reply = await simInbound(broker.sim.url, 'failover', {
      channel: 'sms',
      from: '+2348061000002',
      to: moved.texts.proxyNumber,
      text: 'coming',
    });
    expect(reply.body).toMatchObject({ result: 'relayed' });
    expect((await sent('failover')).filter((c) => c.text === 'coming')).toEqual([
      expect.objectContaining({ from: moved.texts.proxyNumber, to: '+2348061000001' }),
    ]);

    // Nothing moves twice for one outage: another pass changes nothing.
    await rescue();
    expect((await session(texts.id)).proxyNumber).toBe(moved.texts.proxyNumber);
    // Newest first: the reply, the waiting relay and the two notices, the rebound, the create.
    expect(await eventTypesOf(texts.id)).toEqual([
      'message.relayed',
      'message.relayed',
      'message.relayed',
      'message.relayed',
      'session.rebound',
      'session.created',
    ]);

    // Paced: at least 1 / RESCUE_MOVES_PER_SECOND apart (a lower bound, which a loaded machine only makes easier to meet).
    const settled = await withClient(broker.db.url, async (client) =>
      (
        await client.query<{ at: Date }>(
          `SELECT settled_at AS at FROM session_moves WHERE status IN ('moved', 'failed') ORDER BY settled_at`,
        )
      ).rows.map((r) => r.at.getTime()),
    );
    expect(settled).toHaveLength(4);
    expect(settled.slice(1).filter((t, i) => t - settled[i] < 45)).toEqual([]);

    const metrics = (await request(broker.url).get('/metrics').expect(200)).text;
    expect(metrics).toContain('broker_session_rescues_total{from="primary",to="failover",outcome="moved"} 3');
    expect(metrics).toContain('broker_session_rescues_total{from="primary",to="none",outcome="failed"} 1');
    expect(metrics).toContain('broker_session_rescue_max_moves_per_second 20');
    expect(metrics).toContain('broker_session_rescues_pending 0');

    // The primary comes back. A text to the old number gets the out-of-session answer (never relayed), and the app hears of it.
    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    const before = (await sent('primary')).length;
    const stray = await simInbound(broker.sim.url, 'primary', {
      channel: 'sms',
      from: '+2348061000002',
      to: texts.proxyNumber,
      text: 'still there?',
    });
    expect(stray.status).toBe(404);
    expect(stray.body).toMatchObject({ type: expect.stringContaining('no-active-session') });
    expect((await sent('primary')).length).toBe(before);
    expect((await sent('failover')).filter((c) => c.text === 'still there?')).toEqual([]);
    await eventually(async () => delivered('interaction.out_of_session', texts.id).length === 1);
    expect(delivered('interaction.out_of_session', texts.id)[0].data).toMatchObject({
      reason: 'session-rebound',
      sessionId: texts.id,
      provider: 'primary',
      proxyNumber: texts.proxyNumber,
      from: '+2348061000002',
      text: 'still there?',
      movedTo: { provider: 'failover', proxyNumber: moved.texts.proxyNumber },
    });
    const last = (await api().get(`/v1/sessions/${texts.id}/interactions`).expect(200)).body.interactions.at(-1);
    expect(last).toMatchObject({ from: '+2348061000002', to: '+2348061000001', status: 'out-of-session' });

    // Its breaker half-opens on passing health checks: the outage is over, and the old bindings are released there.
    for (let i = 0; i < 5; i++) await broker.app.get(HealthProber).tick();
    expect(await primaryState()).toBe('HALF_OPEN');
    await rescue();
    const unbound = (await simCalls(broker.sim.url, 'primary', 'unbind')).filter((c) => c.outcome === 'ok').map((c) => c.proxyNumber);
    expect(unbound.sort()).toEqual([texts.proxyNumber, conversation.proxyNumber, calls.proxyNumber].sort());
    // The session that could not move is still on the primary, and bound there.
    expect((await session(stuck.id)).provider).toBe('primary');
  });

  async function eventTypesOf(id: string): Promise<string[]> {
    return ((await api().get(`/v1/events?session=${id}`).expect(200)).body.events as Array<{ type: string }>).map((e) => e.type);
  }
});
