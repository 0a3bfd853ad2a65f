/**
 * Conversation sessions on the simulator, driven as the app and the phone users would: one session carrying
 * calls and texts through one proxy number, channels enforced, the app's own messages into the session,
 * uniqueName, prefer-sticky numbers, and what a number dedicated to an account tells it out of session.
 */
import { Client } from 'pg';
import request from 'supertest';
import { RelayWorker } from '../apps/broker/src/relay/relay-worker';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, OTHER_API_KEY, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { clearSimCalls, setFault, simCalls, simInbound } from './support/sim-control';

interface InteractionView {
  id: string;
  channel: string;
  from: string;
  to: string;
  status: string;
}

describe('conversation sessions', () => {
  let broker: BrokerHarness;
  let db: Client;

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      SESSION_SWEEP_INTERVAL_MS: '3600000',
      RELAY_RETRY_INTERVAL_MS: '3600000',
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      SESSION_PARTICIPANT_LIMIT: '1000',
    });
    db = new Client(broker.db.url);
    await db.connect();
  });
  afterEach(async () => {
    await db.query(`UPDATE proxy_numbers SET enabled = true, capabilities = '{sms,voice}'`);
    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
  });
  afterAll(async () => {
    await db.end();
    await broker.close();
  });

  const api = (key = API_KEY) => ({
    get: (path: string) => request(broker.url).get(path).set('authorization', `Bearer ${key}`),
    post: (path: string, body: unknown, idempotencyKey?: string) => {
      const req = request(broker.url).post(path).set('authorization', `Bearer ${key}`);
      if (idempotencyKey) req.set('idempotency-key', idempotencyKey);
      return req.send(body as object);
    },
    delete: (path: string) => request(broker.url).delete(path).set('authorization', `Bearer ${key}`),
  });
  const interactions = async (id: string): Promise<InteractionView[]> =>
    (await api().get(`/v1/sessions/${id}/interactions`).expect(200)).body.interactions;
  const eventTypes = async (id: string): Promise<string[]> =>
    ((await api().get(`/v1/events?session=${id}`).expect(200)).body.events as Array<{ type: string }>).map((e) => e.type);
  const admin = () => ({
    put: (path: string) => request(broker.url).put(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
    delete: (path: string) => request(broker.url).delete(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
  });
  /** The account of API_KEY. */
  const ownAccountId = async (): Promise<string> => {
    const { accounts } = (await request(broker.url).get('/v1/admin/accounts').set('authorization', `Bearer ${ADMIN_TOKEN}`).expect(200))
      .body as { accounts: Array<{ id: string; apiKeys: Array<{ prefix: string }> }> };
    return accounts.find((a) => a.apiKeys.some((k) => API_KEY.startsWith(k.prefix)))!.id;
  };
  const both = (pair: [string, string], extra: Record<string, unknown> = {}) =>
    sessionBody(pair, { channel: undefined, channels: ['voice', 'sms'], ...extra });

  describe('channels', () => {
    it('carries both channels on one proxy number, and answers channels (with the older channel null)', async () => {
      const res = await createSession(broker.url, both(freshPair())).expect(201);
      expect(res.body).toMatchObject({ channels: ['voice', 'sms'], channel: null, status: 'active', expiredReason: null });
      // Any order in, one spelling out.
      const reordered = await createSession(broker.url, both(freshPair(), { channels: ['sms', 'voice'] })).expect(201);
      expect(reordered.body.channels).toEqual(['voice', 'sms']);
    });

    it('keeps the older channel field working unchanged, as the only channel', async () => {
      const res = await createSession(broker.url, sessionBody(freshPair(), { channel: 'voice' })).expect(201);
      expect(res.body).toMatchObject({ channel: 'voice', channels: ['voice'] });
      const same = await createSession(broker.url, sessionBody(freshPair(), { channel: 'sms', channels: ['sms'] })).expect(201);
      expect(same.body).toMatchObject({ channel: 'sms', channels: ['sms'] });
    });

    it.each([
      ['no channel at all', { channel: undefined }, /channels must be given/],
      ['an empty list', { channel: undefined, channels: [] }, /non-empty list/],
      ['an unknown channel', { channel: undefined, channels: ['sms', 'fax'] }, /voice or sms/],
      ['a channel twice', { channel: undefined, channels: ['sms', 'sms'] }, /each channel once/],
      ['not a list', { channel: undefined, channels: 'sms' }, /non-empty list/],
      ['channel and channels that disagree', { channel: 'sms', channels: ['voice', 'sms'] }, /disagree/],
      ['a null list', { channel: undefined, channels: null }, /non-empty list/],
    ])('refuses %s with a 400 naming channels', async (_what, extra, message) => {
      const res = await createSession(broker.url, sessionBody(freshPair(), extra)).expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.errors).toEqual([{ field: 'channels', message: expect.stringMatching(message) }]);
    });

    it('refuses a null channel with a 400 naming it', async () => {
      const res = await createSession(broker.url, sessionBody(freshPair(), { channel: null })).expect(400);
      expect(res.body.errors).toEqual([{ field: 'channel', message: 'channel must be voice or sms' }]);
    });

    it('does not bridge a call into an sms-only session: the out-of-session answer, recorded as such', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, sessionBody([rider, driver], { channel: 'sms' })).expect(201)).body;
      await clearSimCalls(broker.sim.url, 'primary');

      const call = await simInbound(broker.sim.url, 'primary', { channel: 'voice', from: rider, to: session.proxyNumber });
      expect(call.status).toBe(404);
      expect(call.body).toMatchObject({ type: '/problems/no-active-session' });
      expect(await simCalls(broker.sim.url, 'primary', 'call')).toEqual([]);
      expect(await interactions(session.id)).toEqual([
        expect.objectContaining({ channel: 'voice', from: rider, to: driver, status: 'out-of-session' }),
      ]);
      expect(await eventTypes(session.id)).toContain('interaction.out_of_session');
      // The session itself goes on: texts are still relayed.
      const text = await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'ok' });
      expect(text.body).toMatchObject({ result: 'relayed' });
    });

    it('does not relay a text in a voice-only session', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, sessionBody([rider, driver], { channel: 'voice' })).expect(201)).body;
      await clearSimCalls(broker.sim.url, 'primary');

      const text = await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: driver, to: session.proxyNumber, text: 'hello?' });
      expect(text.status).toBe(404);
      expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([]);
      expect(await interactions(session.id)).toEqual([
        expect.objectContaining({ channel: 'sms', from: driver, to: rider, status: 'out-of-session' }),
      ]);
    });

    it('reserves a number that carries every channel of the session, passing over the least loaded one that does not', async () => {
      const { rows } = await db.query<{ id: string; number: string }>(
        `SELECT id, number FROM proxy_numbers WHERE provider = 'primary' ORDER BY number DESC LIMIT 3`,
      );
      // The three highest numbers, which the other tests leave unused: free of load, they are taken in number order.
      const [full, smsOnly, voiceOnly] = rows;
      await db.query(`UPDATE proxy_numbers SET enabled = false WHERE provider = 'primary' AND NOT (id = ANY($1))`, [
        [voiceOnly.id, smsOnly.id, full.id],
      ]);
      await db.query(`UPDATE proxy_numbers SET capabilities = '{voice}' WHERE id = $1`, [voiceOnly.id]);
      await db.query(`UPDATE proxy_numbers SET capabilities = '{sms}' WHERE id = $1`, [smsOnly.id]);

      const conversation = (await createSession(broker.url, both(freshPair())).expect(201)).body;
      expect(conversation).toMatchObject({ provider: 'primary', proxyNumber: full.number });
      const texts = (await createSession(broker.url, sessionBody(freshPair(), { channel: 'sms' })).expect(201)).body;
      expect([smsOnly.number, full.number]).toContain(texts.proxyNumber);
      const calls = (await createSession(broker.url, sessionBody(freshPair(), { channel: 'voice' })).expect(201)).body;
      expect([voiceOnly.number, full.number]).toContain(calls.proxyNumber);

      // With no number carrying both on any provider, a conversation finds no number.
      await db.query(`UPDATE proxy_numbers SET capabilities = '{sms}' WHERE provider = 'failover' OR id = $1`, [full.id]);
      const none = await createSession(broker.url, both(freshPair())).expect(503);
      expect(none.body).toMatchObject({ type: '/problems/pool-exhausted' });
    });
  });

  describe('one session for the whole conversation', () => {
    it('relays the rider’s text and bridges the driver’s call through the same proxy number, and sends the app’s message from it', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, both([rider, driver])).expect(201)).body;
      await clearSimCalls(broker.sim.url, 'primary');

      const text = await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: 'at gate 3' });
      expect(text.body).toMatchObject({ result: 'relayed' });
      const call = await simInbound(broker.sim.url, 'primary', { channel: 'voice', from: driver, to: session.proxyNumber });
      expect(call.body).toEqual({ action: 'bridge', to: rider, callerId: session.proxyNumber });

      const sent = await api().post(`/v1/sessions/${session.id}/messages`, { to: rider, text: 'Your driver has arrived' }).expect(202);
      expect(sent.body).toMatchObject({ channel: 'sms', from: session.proxyNumber, to: rider, status: 'relayed' });

      expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([
        expect.objectContaining({ from: session.proxyNumber, to: driver, text: 'at gate 3' }),
        expect.objectContaining({ from: session.proxyNumber, to: rider, text: 'Your driver has arrived' }),
      ]);
      expect(await simCalls(broker.sim.url, 'primary', 'call')).toEqual([
        expect.objectContaining({ from: session.proxyNumber, to: rider }),
      ]);
      expect((await interactions(session.id)).map((i) => [i.channel, i.from, i.to])).toEqual([
        ['sms', rider, driver],
        ['voice', driver, rider],
        ['sms', session.proxyNumber, rider],
      ]);
      const read = (await api().get(`/v1/sessions/${session.id}`).expect(200)).body;
      expect(Date.parse(read.lastInteractionAt)).toBeGreaterThanOrEqual(Date.parse(session.createdAt));
    });
  });

  describe('messages from the app', () => {
    it('keeps a message the provider cannot take now, and sends it at the retry: message.relayed from the proxy number', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, both([rider, driver])).expect(201)).body;
      await setFault(broker.sim.url, 'primary', { mode: 'error' });
      const queued = await api().post(`/v1/sessions/${session.id}/messages`, { to: driver, text: 'Rider is on the way' }).expect(202);
      expect(queued.body).toMatchObject({ status: 'pending', from: session.proxyNumber, to: driver });

      await setFault(broker.sim.url, 'primary', { mode: 'ok' });
      await clearSimCalls(broker.sim.url, 'primary');
      await db.query('UPDATE interactions SET next_attempt_at = now() WHERE id = $1', [queued.body.id]);
      await broker.app.get(RelayWorker).run();
      expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([
        expect.objectContaining({ from: session.proxyNumber, to: driver, text: 'Rider is on the way' }),
      ]);
      expect(await interactions(session.id)).toEqual([expect.objectContaining({ id: queued.body.id, status: 'relayed' })]);
      expect(await eventTypes(session.id)).toContain('message.relayed');
    });

    it('sends one message for one Idempotency-Key, replays it, and refuses the key with another text (422)', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, both([rider, driver])).expect(201)).body;
      await clearSimCalls(broker.sim.url, 'primary');
      const body = { to: rider, text: 'Arriving in 2 min' };

      const first = await api().post(`/v1/sessions/${session.id}/messages`, body, 'msg-once').expect(202);
      const again = await api().post(`/v1/sessions/${session.id}/messages`, body, 'msg-once').expect(202);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await simCalls(broker.sim.url, 'primary', 'sms')).toHaveLength(1);

      const other = await api()
        .post(`/v1/sessions/${session.id}/messages`, { ...body, text: 'Arriving in 5 min' }, 'msg-once')
        .expect(422);
      expect(other.body).toMatchObject({ type: '/problems/idempotency-key-reused' });
      expect(await simCalls(broker.sim.url, 'primary', 'sms')).toHaveLength(1);
    });

    it('keeps nothing for a message the pipes refuse: the Idempotency-Key then sends the corrected one', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, both([rider, driver])).expect(201)).body;
      await clearSimCalls(broker.sim.url, 'primary');

      await api().post(`/v1/sessions/${session.id}/messages`, { to: rider, text: '' }, 'msg-fixed').expect(400);
      const sent = await api().post(`/v1/sessions/${session.id}/messages`, { to: rider, text: 'Arriving now' }, 'msg-fixed').expect(202);
      expect(sent.headers['idempotent-replayed']).toBeUndefined();
      expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([expect.objectContaining({ to: rider, text: 'Arriving now' })]);
    });

    it('refuses a message to a non-participant, into a voice-only session, into an ended session, or with a bad body', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, both([rider, driver])).expect(201)).body;
      const voice = (await createSession(broker.url, sessionBody(freshPair(), { channel: 'voice' })).expect(201)).body;

      const stranger = await api().post(`/v1/sessions/${session.id}/messages`, { to: '+2348039990001', text: 'hi' }).expect(422);
      expect(stranger.body).toMatchObject({ type: '/problems/not-a-participant', errors: [{ field: 'to', message: expect.any(String) }] });
      const noSms = await api().post(`/v1/sessions/${voice.id}/messages`, { to: voice.participants[0].number, text: 'hi' }).expect(422);
      expect(noSms.body).toMatchObject({ type: '/problems/channel-not-in-session' });
      const empty = await api().post(`/v1/sessions/${session.id}/messages`, { to: rider, text: '' }).expect(400);
      expect(empty.body.errors).toEqual([{ field: 'text', message: 'text must not be empty' }]);
      await api().post(`/v1/sessions/${session.id}/messages`, { to: rider }).expect(400);
      await api()
        .post(`/v1/sessions/${session.id}/messages`, { to: rider, text: 'x'.repeat(1601) })
        .expect(400);
      await api(OTHER_API_KEY).post(`/v1/sessions/${session.id}/messages`, { to: rider, text: 'hi' }).expect(404);
      await api().post('/v1/sessions/not-a-uuid/messages', { to: rider, text: 'hi' }).expect(404);

      await api().delete(`/v1/sessions/${session.id}`).expect(200);
      const closed = await api().post(`/v1/sessions/${session.id}/messages`, { to: rider, text: 'hi' }).expect(409);
      expect(closed.body).toMatchObject({ type: '/problems/session-not-active' });
    });
  });

  describe('uniqueName', () => {
    it('names one live session per account: a second is 409, another account may use it, and it is free once the first ends', async () => {
      const first = (await createSession(broker.url, sessionBody(freshPair(), { uniqueName: 'ride-77' })).expect(201)).body;
      expect(first.uniqueName).toBe('ride-77');

      const second = await createSession(broker.url, sessionBody(freshPair(), { uniqueName: 'ride-77' })).expect(409);
      expect(second.body).toMatchObject({ type: '/problems/unique-name-taken', uniqueName: 'ride-77' });
      await createSession(broker.url, sessionBody(freshPair(), { uniqueName: 'ride-77' }), OTHER_API_KEY).expect(201);

      const found = (await api().get('/v1/sessions?uniqueName=ride-77').expect(200)).body.sessions;
      expect(found.map((s: { id: string }) => s.id)).toEqual([first.id]);

      await api().delete(`/v1/sessions/${first.id}`).expect(200);
      const next = (await createSession(broker.url, sessionBody(freshPair(), { uniqueName: 'ride-77' })).expect(201)).body;
      const named = (await api().get('/v1/sessions?uniqueName=ride-77').expect(200)).body.sessions;
      expect(named.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
        [next.id, 'active'],
        [first.id, 'closed'],
      ]);
      expect((await api().get('/v1/sessions?uniqueName=ride-77&status=active').expect(200)).body.sessions).toHaveLength(1);
    });

    it('frees the name of a session past its expiresAt that the sweeper has not marked yet, expiring it', async () => {
      const lapsed = (await createSession(broker.url, sessionBody(freshPair(), { uniqueName: 'ride-lapsed' })).expect(201)).body;
      await db.query(
        `UPDATE sessions SET expires_at = now() - interval '1 second', inactive_at = now() - interval '1 second' WHERE id = $1`,
        [lapsed.id],
      );
      await createSession(broker.url, sessionBody(freshPair(), { uniqueName: 'ride-lapsed' })).expect(201);
      const { rows } = await db.query('SELECT status, expired_reason FROM sessions WHERE id = $1', [lapsed.id]);
      expect(rows[0]).toEqual({ status: 'expired', expired_reason: 'ttl' });
      expect(await eventTypes(lapsed.id)).toContain('session.expired');
    });

    it('refuses a bad uniqueName with a 400', async () => {
      for (const uniqueName of ['', 'x'.repeat(192), 'a\u0007b', 42]) {
        const res = await createSession(broker.url, sessionBody(freshPair(), { uniqueName })).expect(400);
        expect([...new Set(res.body.errors.map((e: { field: string }) => e.field))]).toEqual(['uniqueName']);
      }
      await api()
        .get(`/v1/sessions?uniqueName=${'x'.repeat(192)}`)
        .expect(400);
    });
  });

  describe('numberSelection', () => {
    it('prefer-sticky gives the first participant the number of their most recent session, where the pool rule and the quarantine allow', async () => {
      const accountId = await ownAccountId();
      const riderA = '+2348037770001';
      const riderB = '+2348037770011';
      const courier = '+2348037770002';
      const had = (await createSession(broker.url, sessionBody([riderA, courier])).expect(201)).body;
      await api().delete(`/v1/sessions/${had.id}`).expect(200);
      // A number dedicated to the account comes first for any create of it that does not ask to be sticky.
      const { rows } = await db.query<{ id: string; number: string }>(
        `SELECT id, number FROM proxy_numbers WHERE provider = 'primary' AND number <> $1 ORDER BY number DESC LIMIT 1`,
        [had.proxyNumber],
      );
      const [dedicated] = rows;
      await admin().put(`/v1/admin/numbers/${dedicated.id}/account`).send({ accountId }).expect(200);
      try {
        const usual = (await createSession(broker.url, sessionBody([riderB, '+2348037770012'])).expect(201)).body;
        expect(usual.proxyNumber).toBe(dedicated.number);

        // With the same courier again (with anyone else the quarantine holds it from rider A for a day:
        // SESSION_NUMBER_QUARANTINE_SECONDS, apps/broker/src/sessions/number-quarantine.spec.ts).
        const sticky = (await createSession(broker.url, sessionBody([riderA, courier], { numberSelection: 'prefer-sticky' })).expect(201))
          .body;
        expect(sticky.proxyNumber).toBe(had.proxyNumber);

        // Rider A is active on that number now: the pool rule wins over the preference.
        const another = (
          await createSession(broker.url, sessionBody([riderA, '+2348037770004'], { numberSelection: 'prefer-sticky' })).expect(201)
        ).body;
        expect(another.proxyNumber).toBe(dedicated.number);
      } finally {
        await admin().delete(`/v1/admin/numbers/${dedicated.id}/account`).expect(200);
      }
      await createSession(broker.url, sessionBody(freshPair(), { numberSelection: 'nearest' })).expect(400);
    });
  });

  describe('out of session', () => {
    it('tells the account a number is dedicated to who wrote or called it out of session; a shared number tells nobody', async () => {
      const accountId = await ownAccountId();
      const { rows } = await db.query<{ id: string; number: string }>(
        `SELECT id, number FROM proxy_numbers WHERE provider = 'failover' ORDER BY number DESC LIMIT 2`,
      );
      const [dedicated, shared] = rows;
      await admin().put(`/v1/admin/numbers/${dedicated.id}/account`).send({ accountId }).expect(200);
      const outOfSession = async () =>
        (
          (await api().get('/v1/events?limit=100').expect(200)).body.events as Array<{ type: string; data: Record<string, unknown> }>
        ).filter((e) => e.type === 'interaction.out_of_session' && e.data.reason === 'no-session');
      const before = (await outOfSession()).length;
      try {
        const stranger = '+2348036660001';
        const text = await simInbound(broker.sim.url, 'failover', {
          channel: 'sms',
          from: stranger,
          to: dedicated.number,
          text: 'Is this the shop?',
        });
        expect(text.status).toBe(404);
        await simInbound(broker.sim.url, 'failover', { channel: 'voice', from: stranger, to: dedicated.number });
        await simInbound(broker.sim.url, 'failover', { channel: 'sms', from: stranger, to: shared.number, text: 'hello?' });

        const after = await outOfSession();
        const told = after.slice(0, after.length - before);
        expect(told.map((e) => e.data)).toEqual([
          expect.objectContaining({
            channel: 'voice',
            from: stranger,
            proxyNumber: dedicated.number,
            provider: 'failover',
            sessionId: null,
          }),
          expect.objectContaining({ channel: 'sms', from: stranger, proxyNumber: dedicated.number, text: 'Is this the shop?' }),
        ]);
        // No other account hears of it.
        const others = (await api(OTHER_API_KEY).get('/v1/events?limit=100').expect(200)).body.events as Array<{ type: string }>;
        expect(others.filter((e) => e.type === 'interaction.out_of_session')).toEqual([]);
      } finally {
        await admin().delete(`/v1/admin/numbers/${dedicated.id}/account`).expect(200);
      }
    });
  });
});
