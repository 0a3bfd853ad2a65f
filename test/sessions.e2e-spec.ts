/**
 * Sessions over the HTTP API, against the real simulator and a real PostgreSQL: creation and its
 * validation, auth and tenancy, listing, closing, idempotency, the pool rule and expiry.
 */
import { Client } from 'pg';
import request from 'supertest';
import { SessionSweeper } from '../apps/broker/src/sessions/session-sweeper';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, OTHER_API_KEY, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { clearSimCalls, setFault, simCalls } from './support/sim-control';

describe('sessions API', () => {
  let broker: BrokerHarness;
  let db: Client;

  beforeAll(async () => {
    // The pool-rule tests fill the pool for one person from one account: the fair-use limit
    // (SESSION_PARTICIPANT_LIMIT, test/hostile.e2e-spec.ts) is raised out of their way.
    broker = await startBroker({ ...AUTH_ENV, SESSION_SWEEP_INTERVAL_MS: '3600000', SESSION_PARTICIPANT_LIMIT: '1000' });
    db = new Client(broker.db.url);
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await broker.close();
  });

  describe('create', () => {
    it('answers 201 with the session on the primary, a pooled proxy number, and binds it there', async () => {
      const pair = freshPair();
      const res = await createSession(broker.url, sessionBody(pair, { ttlSeconds: 600, metadata: { rideId: 'r-1' } })).expect(201);
      expect(res.body).toMatchObject({
        channel: 'sms',
        status: 'active',
        provider: 'primary',
        participants: [{ number: pair[0] }, { number: pair[1] }],
        callbackUrl: null,
        metadata: { rideId: 'r-1' },
      });
      expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body.proxyNumber).toMatch(/^\+23490100000\d\d$/);
      const ttl = (Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)) / 1000;
      expect(ttl).toBeCloseTo(600, 0);
      const binds = await simCalls(broker.sim.url, 'primary', 'bind');
      expect(binds.some((b) => JSON.stringify(b).includes(pair[0]) && JSON.stringify(b).includes(res.body.proxyNumber))).toBe(true);
    });

    it('answers without an ETag: no answer of the API is hashed for one', async () => {
      const res = await createSession(broker.url, sessionBody(freshPair())).expect(201);
      expect(res.headers.etag).toBeUndefined();
      const read = await request(broker.url).get(`/v1/sessions/${res.body.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
      expect(read.headers.etag).toBeUndefined();
    });

    it('defaults the ttl to an hour', async () => {
      const res = await createSession(broker.url, sessionBody(freshPair())).expect(201);
      expect((Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)) / 1000).toBeCloseTo(3600, 0);
    });

    it.each([
      ['a number that is not E.164', { participants: [{ number: '08030000001' }, { number: '+2348030009999' }] }, 'participants[0].number'],
      ['identical participants', { participants: [{ number: '+2348030009998' }, { number: '+2348030009998' }] }, 'participants'],
      ['one participant', { participants: [{ number: '+2348030009997' }] }, 'participants'],
      [
        'three participants',
        { participants: [{ number: '+2348030009991' }, { number: '+2348030009992' }, { number: '+2348030009993' }] },
        'participants',
      ],
      ['a ttl under a minute', { ttlSeconds: 10 }, 'ttlSeconds'],
      ['a ttl over 7 days', { ttlSeconds: 7 * 24 * 3600 + 1 }, 'ttlSeconds'],
      ['an unknown field', { colour: 'blue' }, 'colour'],
      ['oversized metadata', { metadata: { blob: 'x'.repeat(5000) } }, 'metadata'],
      ['metadata that is not an object', { metadata: [1, 2] }, 'metadata'],
      ['a callbackUrl that is not a URL', { callbackUrl: 'not a url' }, 'callbackUrl'],
      ['a callbackUrl on a private address', { callbackUrl: 'http://10.0.0.8/hook' }, 'callbackUrl'],
      ['a callbackUrl over 2048 characters', { callbackUrl: `https://example.com/${'a'.repeat(2048)}` }, 'callbackUrl'],
      ['an unknown channel', { channel: 'fax' }, 'channel'],
    ])('refuses %s with a 400 problem naming the field', async (_what, override, field) => {
      const res = await createSession(broker.url, { ...sessionBody(['+2348030009001', '+2348030009002']), ...override });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it('refuses a missing or wrong API key with 401', async () => {
      const body = sessionBody(freshPair());
      const missing = await request(broker.url).post('/v1/sessions').send(body).expect(401);
      expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
      await createSession(broker.url, body, 'sk_wrong_key_0000000000000000').expect(401);
      await request(broker.url).post('/v1/sessions').set('authorization', `Bearer ${ADMIN_TOKEN}`).send(body).expect(401);
    });

    it('answers 503 naming each provider once with what went wrong there, when every provider fails', async () => {
      await setFault(broker.sim.url, 'primary', { mode: 'error' });
      await setFault(broker.sim.url, 'failover', { mode: 'error' });
      try {
        const refused = await createSession(broker.url, sessionBody(freshPair())).expect(503);
        expect(refused.body).toMatchObject({ title: 'Every provider failed' });
        expect(refused.body.detail).toMatch(/^The session could not be created: primary: .+; failover: .+\.$/);
        expect(refused.body.detail).not.toMatch(/primary: primary:|failover: failover:/);
      } finally {
        await setFault(broker.sim.url, 'primary', { mode: 'ok' });
        await setFault(broker.sim.url, 'failover', { mode: 'ok' });
      }
    });
  });

  describe('read, list and tenancy', () => {
    it('refuses a limit that is not a number with one message naming it', async () => {
      const res = await request(broker.url).get('/v1/sessions?limit=abc').set('authorization', `Bearer ${API_KEY}`).expect(400);
      expect(res.body.errors).toEqual([{ field: 'limit', message: 'limit must be a whole number from 1 to 200' }]);
    });

    it('shows a session to its own account only: any other account gets 404 and never sees it listed', async () => {
      const mine = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body;
      const auth = (key: string) => ({ authorization: `Bearer ${key}` });
      await request(broker.url).get(`/v1/sessions/${mine.id}`).set(auth(API_KEY)).expect(200);
      const other = await request(broker.url).get(`/v1/sessions/${mine.id}`).set(auth(OTHER_API_KEY)).expect(404);
      expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
      await request(broker.url).delete(`/v1/sessions/${mine.id}`).set(auth(OTHER_API_KEY)).expect(404);
      await request(broker.url).get(`/v1/sessions/${mine.id}/interactions`).set(auth(OTHER_API_KEY)).expect(404);
      const listed = await request(broker.url).get('/v1/sessions?limit=200').set(auth(OTHER_API_KEY)).expect(200);
      expect(listed.body.sessions.map((s: { id: string }) => s.id)).not.toContain(mine.id);
      await request(broker.url).get('/v1/sessions/not-a-uuid').set(auth(API_KEY)).expect(404);
    });

    it('lists newest first, a page at a time, filtered by status', async () => {
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await createSession(broker.url, sessionBody(freshPair()), OTHER_API_KEY).expect(201)).body.id);
      await request(broker.url).delete(`/v1/sessions/${made[0]}`).set('authorization', `Bearer ${OTHER_API_KEY}`).expect(200);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: request.Response = await request(broker.url)
          .get(`/v1/sessions?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
          .set('authorization', `Bearer ${OTHER_API_KEY}`)
          .expect(200);
        expect(page.body.sessions.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.sessions.map((s: { id: string }) => s.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual([...made].reverse());

      const closed = await request(broker.url)
        .get('/v1/sessions?status=closed')
        .set('authorization', `Bearer ${OTHER_API_KEY}`)
        .expect(200);
      expect(closed.body.sessions.map((s: { id: string }) => s.id)).toEqual([made[0]]);
      const active = await request(broker.url)
        .get('/v1/sessions?status=active')
        .set('authorization', `Bearer ${OTHER_API_KEY}`)
        .expect(200);
      expect(active.body.sessions).toHaveLength(4);
      const bad = await request(broker.url)
        .get('/v1/sessions?status=gone&limit=0')
        .set('authorization', `Bearer ${OTHER_API_KEY}`)
        .expect(400);
      expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['limit', 'status']);
      await request(broker.url).get('/v1/sessions?cursor=bogus').set('authorization', `Bearer ${OTHER_API_KEY}`).expect(400);
    });
  });

  describe('close', () => {
    it('closes and unbinds; closing again is harmless', async () => {
      const session = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body;
      await clearSimCalls(broker.sim.url, 'primary');
      const closed = await request(broker.url).delete(`/v1/sessions/${session.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
      expect(closed.body.status).toBe('closed');
      const unbinds = await simCalls(broker.sim.url, 'primary', 'unbind');
      expect(unbinds).toHaveLength(1);
      const again = await request(broker.url).delete(`/v1/sessions/${session.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
      expect(again.body.status).toBe('closed');
      expect(await simCalls(broker.sim.url, 'primary', 'unbind')).toHaveLength(1);
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the first answer for the same key and body, with a header saying so', async () => {
      const body = sessionBody(freshPair());
      const first = await createSession(broker.url, body, API_KEY, 'idem-replay-1').expect(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await createSession(
        broker.url,
        { participants: body.participants, channel: body.channel },
        API_KEY,
        'idem-replay-1',
      ).expect(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    });

    it('refuses the same key with another body with 422', async () => {
      await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-conflict-1').expect(201);
      const res = await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-conflict-1').expect(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    });

    it('keeps keys per account', async () => {
      const a = await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-shared-key').expect(201);
      const b = await createSession(broker.url, sessionBody(freshPair()), OTHER_API_KEY, 'idem-shared-key').expect(201);
      expect(b.body.id).not.toBe(a.body.id);
    });

    it('makes one session from concurrent requests with one key', async () => {
      const body = sessionBody(freshPair());
      const answers = await Promise.all(Array.from({ length: 8 }, () => createSession(broker.url, body, API_KEY, 'idem-concurrent-1')));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM sessions WHERE participants = $1`, [
        (body.participants as Array<{ number: string }>).map((p) => p.number),
      ]);
      expect(rows[0].n).toBe(1);
    });
  });

  describe('the pool rule', () => {
    it('never puts a participant in two active sessions on one proxy number, under 200 concurrent overlapping creates', async () => {
      const people = Array.from({ length: 12 }, (_, i) => `+23481100000${String(i).padStart(2, '0')}`);
      const pairs = Array.from({ length: 200 }, (_, i) => {
        const a = people[i % people.length];
        const b = people[(i * 7 + 3) % people.length];
        return [a, b === a ? people[(i + 1) % people.length] : b] as [string, string];
      });
      const answers = await Promise.all(pairs.map((pair) => createSession(broker.url, sessionBody(pair))));
      const statuses = answers.map((a) => a.status);
      expect(statuses.every((s) => s === 201 || s === 503)).toBe(true);
      expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(20);
      for (const refused of answers.filter((a) => a.status === 503)) expect(refused.body.detail).toMatch(/Pool exhausted/);

      const { rows } = await db.query(`
        SELECT p.proxy_number_id, p.number, count(*)::int AS n
          FROM session_participants p JOIN sessions s ON s.id = p.session_id
         WHERE s.status = 'active' AND s.expires_at > now()
         GROUP BY 1, 2 HAVING count(*) > 1`);
      expect(rows).toEqual([]);
    }, 60_000);

    it('answers 503 saying the pool is exhausted when no number is free on any provider', async () => {
      const pair = freshPair();
      const made = [];
      for (let i = 0; i < 20; i++) made.push(await createSession(broker.url, sessionBody(pair)));
      expect(made.every((m) => m.status === 201)).toBe(true);
      expect(new Set(made.map((m) => `${m.body.provider} ${m.body.proxyNumber}`)).size).toBe(20);
      const refused = await createSession(broker.url, sessionBody(pair)).expect(503);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.body).toMatchObject({ status: 503, title: 'Proxy number pool exhausted' });
      expect(refused.body.detail).toMatch(/^Pool exhausted/);
    });
  });

  describe('expiry', () => {
    it('makes a session inactive from expiresAt on, before any sweep; the sweeper then marks it expired and unbinds', async () => {
      const pair = freshPair();
      const session = (await createSession(broker.url, sessionBody(pair, { ttlSeconds: 60 })).expect(201)).body;
      await db.query(
        `UPDATE sessions SET expires_at = now() - interval '1 second', inactive_at = now() - interval '1 second' WHERE id = $1`,
        [session.id],
      );
      await db.query(`UPDATE session_participants SET expires_at = now() - interval '1 second' WHERE session_id = $1`, [session.id]);

      const read = await request(broker.url).get(`/v1/sessions/${session.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
      expect(read.body.status).toBe('expired');
      // Its participants are free again on that very number, the only one left enabled.
      await db.query('UPDATE proxy_numbers SET enabled = false WHERE number <> $1', [session.proxyNumber]);
      try {
        const next = (await createSession(broker.url, sessionBody(pair)).expect(201)).body;
        expect(next.proxyNumber).toBe(session.proxyNumber);
      } finally {
        await db.query('UPDATE proxy_numbers SET enabled = true');
      }

      await clearSimCalls(broker.sim.url, 'primary');
      await broker.app.get(SessionSweeper).sweep();
      const { rows } = await db.query('SELECT status, released_at FROM sessions WHERE id = $1', [session.id]);
      expect(rows[0].status).toBe('expired');
      expect(rows[0].released_at).not.toBeNull();
      expect((await simCalls(broker.sim.url, 'primary', 'unbind')).length).toBe(1);
    });
  });
});
