/**
 * `Idempotency-Key` on POST /v1/sessions against the running broker, each rule from its own state:
 * a 5xx lets go of the key, a stored answer is replayed byte for byte, a request still running is
 * waited for, a key whose request died is taken over once it is older than any create can take
 * (and answers the session the dead request made, if it made one), a bad key is a 400, and a record
 * is forgotten after 24 h. Time is the broker's idempotency clock, moved by hand; nothing waits on the wall clock
 * except the provider timeout that keeps the first request running.
 */
import { createHash } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import type { Clock } from '@app/clock';
import { CLOCK } from '../apps/broker/src/common/clock';
import { ListenClient } from '../apps/broker/src/database/listen-client';
import { IdempotencyRepository } from '../apps/broker/src/idempotency/idempotency.repository';
import { IdempotencyService, canonicalJson } from '../apps/broker/src/idempotency/idempotency.service';
import { ManualClock } from '@app/testing';
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault } from './support/sim-control';

const DAY_MS = 24 * 3_600_000;

describe('Idempotency-Key', () => {
  let broker: BrokerHarness;
  let db: Client;
  let clock: Clock;
  let systemNow: Clock['now'];

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      // Long enough that the first request is surely still running while the test asks again.
      PROVIDER_CALL_TIMEOUT_MS: '4000',
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
    db = new Client(broker.db.url);
    await db.connect();
    clock = broker.app.get<Clock>(CLOCK);
    systemNow = clock.now;
  });
  afterEach(async () => {
    clock.now = systemNow;
    await db.query('UPDATE proxy_numbers SET enabled = true');
    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
  });
  afterAll(async () => {
    await db.end();
    await broker.close();
  });

  /** Puts a clock the test moves on the broker's idempotency, starting now. */
  function manualClock(): ManualClock {
    const manual = new ManualClock(Date.now());
    clock.now = () => manual.now();
    return manual;
  }

  async function recordOf(key: string): Promise<{ response_status: number | null } | undefined> {
    const { rows } = await db.query('SELECT response_status FROM idempotency_records WHERE key = $1', [key]);
    return rows[0];
  }

  it('lets go of the key after a 5xx, so a retry with it runs again', async () => {
    // Keys in an order a jsonb column would change: the replay must still be the same bytes.
    const body = sessionBody(freshPair(), { metadata: { zeta: 1, alpha: { y: 2, b: [3, 'x'] } } });
    await db.query('UPDATE proxy_numbers SET enabled = false');
    const refused = await createSession(broker.url, body, API_KEY, 'idem-5xx').expect(503);
    expect(refused.body.detail).toMatch(/^Pool exhausted/);
    expect(await recordOf('idem-5xx')).toBeUndefined();

    await db.query('UPDATE proxy_numbers SET enabled = true');
    const retried = await createSession(broker.url, body, API_KEY, 'idem-5xx').expect(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await recordOf('idem-5xx')).toEqual({ response_status: 201 });
    const again = await createSession(broker.url, body, API_KEY, 'idem-5xx').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(retried.text);
  });

  it('replays a stored 4xx with all its fields', async () => {
    // A loopback callback URL is refused inside the create (not by the request pipe), so its 400 is kept.
    const body = sessionBody(freshPair(), { callbackUrl: 'http://127.0.0.1/hooks' });
    const first = await createSession(broker.url, body, API_KEY, 'idem-4xx').expect(400);
    expect(first.body).toMatchObject({ type: '/problems/validation-error', status: 400 });
    expect(first.body.errors).toEqual([{ field: 'callbackUrl', message: expect.stringMatching(/loopback/) }]);
    expect(await recordOf('idem-4xx')).toEqual({ response_status: 400 });

    const replay = await createSession(broker.url, body, API_KEY, 'idem-4xx').expect(400);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(replay.text).toBe(first.text);
  });

  it('takes over after the longest a create can take: every provider tried up to its timeout, plus a margin', () => {
    const { providerCallTimeoutMs, providers } = broker.config;
    expect(broker.app.get(IdempotencyService).takeoverAfterMs).toBe(providerCallTimeoutMs * (providers.length + 1) + 5_000);
  });

  it('waits for a first request still running, and replays its answer', async () => {
    const takeoverAfterMs = broker.app.get(IdempotencyService).takeoverAfterMs;
    const manual = manualClock();
    const claimedAt = manual.now();
    const body = sessionBody(freshPair());
    // The primary holds the bind until the broker's own timeout; the create then fails over.
    await setFault(broker.sim.url, 'primary', { mode: 'timeout' });
    const first = createSession(broker.url, body, API_KEY, 'idem-wait').then((res) => res);
    await eventually(async () => (await recordOf('idem-wait')) !== undefined, 100, 20);
    expect(await recordOf('idem-wait')).toEqual({ response_status: null });

    manual.set(claimedAt + takeoverAfterMs - 1);
    const waited = createSession(broker.url, body, API_KEY, 'idem-wait').then((res) => res);
    const made = await first;
    expect(made.status).toBe(201);
    expect(made.body.provider).toBe('failover');
    const replayed = await waited;
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.text).toBe(made.text);
  }, 30_000);

  // A mutation audit found this untested: replaying the running first request's answer to another body survived.
  it('refuses the key with another body while the first request is still running (422), and replays it to the same body', async () => {
    const pair = freshPair();
    const body = sessionBody(pair);
    // The primary holds the bind until the broker's own timeout (4 s): the first request is running all that time.
    await setFault(broker.sim.url, 'primary', { mode: 'timeout' });
    let firstAnswered = false;
    const first = createSession(broker.url, body, API_KEY, 'idem-running').then((res) => ((firstAnswered = true), res));
    await eventually(async () => (await recordOf('idem-running')) !== undefined, 100, 20);

    const other = await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-running');
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ type: '/problems/idempotency-key-reused' });
    expect(firstAnswered).toBe(false);
    expect(await recordOf('idem-running')).toEqual({ response_status: null });

    const same = createSession(broker.url, body, API_KEY, 'idem-running').then((res) => res);
    const made = await first;
    expect(made.status).toBe(201);
    const replayed = await same;
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.text).toBe(made.text);
    expect(await sessionsOf(pair)).toHaveLength(1);
  }, 30_000);

  it('answers 100 concurrent retries of one slow create alike, with one session and a handful of idempotency statements, not a poll each', async () => {
    const statements = async (): Promise<number> => {
      const text = await (await fetch(`${broker.url}/metrics`)).text();
      return [...text.matchAll(/^broker_db_statement_duration_seconds_count\{statement="idempotency\.[a-z]+"\} (\d+)$/gm)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
    };
    const pair = freshPair();
    await setFault(broker.sim.url, 'primary', { mode: 'ok', latencyMs: 1500 });
    const before = await statements();
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => createSession(broker.url, sessionBody(pair), API_KEY, 'idem-herd')),
    );
    const used = (await statements()) - before;

    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(99);
    expect(await sessionsOf(pair)).toHaveLength(1);
    // The first request claims and stores (2); those that reach the broker while it runs wait on it in memory (0
    // each), and one that arrives after it landed reads the kept answer (2). A quiet machine measures 2-4; on a
    // loaded one the 100 arrivals spread past the 1.5 s create and up to 46 were seen. Before: a claim and a read
    // every 50 ms per waiter, thousands. Under 100 means most requests never touched the database.
    expect(used).toBeGreaterThanOrEqual(2);
    expect(used).toBeLessThan(100);
  }, 60_000);

  describe('with the first request on another replica', () => {
    let other: BrokerHarness;
    let otherService: IdempotencyService;

    beforeAll(async () => {
      other = await startBroker(
        // A takeover here would be 20 min away: only a notification or the re-check wakes a waiter.
        { ...AUTH_ENV, PROVIDER_CALL_TIMEOUT_MS: '600000', BREAKER_HEALTH_INTERVAL_MS: '3600000', SESSION_SWEEP_INTERVAL_MS: '3600000' },
        { db: broker.db, sim: broker.sim },
      );
      broker.sim.config.brokerUrl = broker.url;
      otherService = other.app.get(IdempotencyService);
      await eventually(async () => other.app.get(ListenClient).connected, 100, 50);
    });
    afterEach(() => {
      otherService.recheckMs = 2_000;
    });
    afterAll(async () => {
      await other.close();
      broker.sim.config.brokerUrl = broker.url;
    });
    const otherUrl = () => other.url;

    async function statements(url: string): Promise<number> {
      const text = await (await fetch(`${url}/metrics`)).text();
      return [...text.matchAll(/^broker_db_statement_duration_seconds_count\{statement="idempotency\.[a-z]+"\} (\d+)$/gm)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
    }

    /** A create of `pair` with `key` on the first broker, slowed to 1.5 s, and 20 retries of it on the other; their statements there. */
    async function twentyWaitersElsewhere(key: string): Promise<{ made: request.Response; waiters: request.Response[]; used: number }> {
      const pair = freshPair();
      await setFault(broker.sim.url, 'primary', { mode: 'ok', latencyMs: 1500 });
      const first = createSession(broker.url, sessionBody(pair), API_KEY, key).then((res) => res);
      await eventually(async () => (await recordOf(key)) !== undefined, 100, 20);
      const before = await statements(other.url);
      const waiters = await Promise.all(Array.from({ length: 20 }, () => createSession(other.url, sessionBody(pair), API_KEY, key)));
      const used = (await statements(other.url)) - before;
      const made = await first;
      expect(await sessionsOf(pair)).toHaveLength(1);
      return { made, waiters, used };
    }

    it('wakes its waiters on the NOTIFY of the answer: one look before and one after, all 20 answered alike', async () => {
      // The re-check is 15 min away: only the notification can answer these within the test's time.
      otherService.recheckMs = 900_000;
      const { made, waiters, used } = await twentyWaitersElsewhere('idem-notified');

      expect(made.status).toBe(201);
      expect(waiters.map((w) => w.status)).toEqual(Array(20).fill(201));
      expect(new Set(waiters.map((w) => w.text))).toEqual(new Set([made.text]));
      expect(waiters.every((w) => w.headers['idempotent-replayed'] === 'true')).toBe(true);
      // One flight: a claim and a read before the answer, the same once woken (4); a waiter that reaches this
      // replica after the answer landed reads it once (2 more). The 15-minute re-check above is what proves the wake.
      expect(used).toBeGreaterThanOrEqual(2);
      expect(used).toBeLessThanOrEqual(10);
    }, 60_000);

    it('refuses the key with another body on this replica while the first request still runs on the other (422)', async () => {
      const pair = freshPair();
      await setFault(broker.sim.url, 'primary', { mode: 'timeout' });
      let firstAnswered = false;
      const first = createSession(broker.url, sessionBody(pair), API_KEY, 'idem-running-elsewhere').then(
        (res) => ((firstAnswered = true), res),
      );
      await eventually(async () => (await recordOf('idem-running-elsewhere')) !== undefined, 100, 20);

      const other = await createSession(otherUrl(), sessionBody(freshPair()), API_KEY, 'idem-running-elsewhere');
      expect(other.status).toBe(422);
      expect(other.body).toMatchObject({ type: '/problems/idempotency-key-reused' });
      expect(firstAnswered).toBe(false);
      expect(await recordOf('idem-running-elsewhere')).toEqual({ response_status: null });
      // The same body there waits for the first answer and replays it.
      const same = await createSession(otherUrl(), sessionBody(pair), API_KEY, 'idem-running-elsewhere');
      const made = await first;
      expect(made.status).toBe(201);
      expect(same.status).toBe(201);
      expect(same.text).toBe(made.text);
    }, 60_000);

    it('notifies nothing but a hash of account and key', async () => {
      const listener = new Client(broker.db.url);
      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (m) => heard.push(`${m.channel} ${m.payload}`));
      await listener.query('LISTEN broker_idempotency');
      try {
        const made = await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-payload').expect(201);
        const { rows } = await db.query('SELECT account_id FROM sessions WHERE id = $1', [made.body.id]);
        const topic = createHash('sha256').update(`${rows[0].account_id}\u0000idem-payload`).digest('hex');
        await eventually(async () => heard.length > 0, 100, 20);
        expect(heard).toEqual([`broker_idempotency ${topic}`]);
      } finally {
        await listener.end();
      }
    });

    it('still answers when the notification is lost, on the re-check', async () => {
      const body = sessionBody(freshPair());
      const made = await createSession(broker.url, body, API_KEY).expect(201);
      const { rows } = await db.query('SELECT account_id FROM sessions WHERE id = $1', [made.body.id]);
      // A first request still running elsewhere, as the record shows it.
      await db.query(
        `INSERT INTO idempotency_records (account_id, key, request_hash, created_at, expires_at) VALUES ($1, $2, $3, now(), now() + interval '1 day')`,
        [rows[0].account_id, 'idem-lost', createHash('sha256').update(canonicalJson(body)).digest('hex')],
      );
      otherService.recheckMs = 500;
      const before = await statements(other.url);
      const waiters = Promise.all(Array.from({ length: 5 }, () => createSession(other.url, body, API_KEY, 'idem-lost')));
      await eventually(async () => (await statements(other.url)) - before >= 2, 100, 20);
      // Its answer written without a NOTIFY.
      const answer = JSON.stringify({ answered: 'without a notification' });
      await db.query('UPDATE idempotency_records SET response_status = 201, response_body = $2 WHERE key = $1', ['idem-lost', answer]);

      const answers = await waiters;
      expect(answers.map((a) => a.status)).toEqual(Array(5).fill(201));
      expect(answers.map((a) => a.text)).toEqual(Array(5).fill(answer));
    }, 30_000);

    it('wakes its waiters when the first request lets go of the key (a 5xx), and one of them runs the create', async () => {
      otherService.recheckMs = 900_000;
      const pair = freshPair();
      const body = sessionBody(pair);
      const made = await createSession(broker.url, sessionBody(freshPair()), API_KEY).expect(201);
      const { rows } = await db.query('SELECT account_id FROM sessions WHERE id = $1', [made.body.id]);
      const claimedAt = new Date(Date.now());
      await db.query(
        `INSERT INTO idempotency_records (account_id, key, request_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
        [
          rows[0].account_id,
          'idem-released',
          createHash('sha256').update(canonicalJson(body)).digest('hex'),
          claimedAt,
          new Date(claimedAt.getTime() + DAY_MS),
        ],
      );
      const before = await statements(other.url);
      const waiters = Promise.all(Array.from({ length: 5 }, () => createSession(other.url, body, API_KEY, 'idem-released')));
      await eventually(async () => (await statements(other.url)) - before >= 2, 100, 20);
      // The first request failed with a 5xx on the first broker: the statement that lets go of its claim.
      await broker.app.get(IdempotencyRepository).release(rows[0].account_id, 'idem-released', claimedAt);

      const answers = await waiters;
      expect(answers.map((a) => a.status)).toEqual(Array(5).fill(201));
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(answers.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
      expect(await sessionsOf(pair)).toEqual([{ id: answers[0].body.id, status: 'active', idempotency_key: 'idem-released' }]);
    }, 60_000);

    it('still answers with LISTEN down, looking again with backoff', async () => {
      await other.app.get(ListenClient).stop();
      expect(other.app.get(ListenClient).connected).toBe(false);
      const { made, waiters, used } = await twentyWaitersElsewhere('idem-unlistened');

      expect(made.status).toBe(201);
      expect(waiters.map((w) => w.status)).toEqual(Array(20).fill(201));
      expect(new Set(waiters.map((w) => w.text))).toEqual(new Set([made.text]));
      // One flight polling: a claim and a read per look, 50 ms doubling to 1 s, for all 20.
      expect(used).toBeGreaterThanOrEqual(4);
      expect(used).toBeLessThanOrEqual(20);
    }, 60_000);
  });

  /** The state a create killed after claiming its key leaves: a record with no answer, claimed at `at`. */
  async function deadClaim(key: string, body: Record<string, unknown>, at: number): Promise<void> {
    const made = await createSession(broker.url, sessionBody(freshPair()), API_KEY).expect(201);
    const { rows } = await db.query('SELECT account_id FROM sessions WHERE id = $1', [made.body.id]);
    await db.query(`INSERT INTO idempotency_records (account_id, key, request_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`, [
      rows[0].account_id,
      key,
      createHash('sha256').update(canonicalJson(body)).digest('hex'),
      new Date(at),
      new Date(at + DAY_MS),
    ]);
  }

  async function sessionsOf(pair: [string, string]): Promise<Array<{ id: string; status: string; idempotency_key: string | null }>> {
    const { rows } = await db.query('SELECT id, status, idempotency_key FROM sessions WHERE participants = $1', [pair]);
    return rows;
  }

  it('takes over the key of a request that died once the longest a create can take has passed, not 1 ms before', async () => {
    const takeoverAfterMs = broker.app.get(IdempotencyService).takeoverAfterMs;
    const manual = new ManualClock(Date.now());
    let reads = 0;
    clock.now = () => {
      reads += 1;
      return manual.now();
    };
    const deadAt = manual.now();
    const pair = freshPair();
    const body = sessionBody(pair);
    await deadClaim('idem-dead', body, deadAt);

    manual.set(deadAt + takeoverAfterMs - 1);
    reads = 0;
    const retry = createSession(broker.url, body, API_KEY, 'idem-dead').then((res) => res);
    // Each look at the record reads the clock once: three looks, and the key is still the dead request's.
    await eventually(async () => reads >= 3, 100, 50);
    const { rows } = await db.query('SELECT response_status, created_at FROM idempotency_records WHERE key = $1', ['idem-dead']);
    expect(rows).toEqual([{ response_status: null, created_at: new Date(deadAt) }]);
    expect(await sessionsOf(pair)).toEqual([]);

    manual.set(deadAt + takeoverAfterMs);
    const res = await retry;
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await sessionsOf(pair)).toEqual([{ id: res.body.id, status: 'active', idempotency_key: 'idem-dead' }]);
    expect(await recordOf('idem-dead')).toEqual({ response_status: 201 });
    const again = await createSession(broker.url, body, API_KEY, 'idem-dead').expect(201);
    expect(again.text).toBe(res.text);
  });

  it('answers the session a request that died had activated, making no second one', async () => {
    const takeoverAfterMs = broker.app.get(IdempotencyService).takeoverAfterMs;
    const manual = manualClock();
    const pair = freshPair();
    const body = sessionBody(pair, { metadata: { order: 'A-1' } });
    const first = await createSession(broker.url, body, API_KEY, 'idem-activated').expect(201);
    // Killed between the activation and keeping the answer: the record has none, the session exists.
    const deadAt = manual.now();
    await db.query('UPDATE idempotency_records SET response_status = NULL, response_body = NULL, created_at = $2 WHERE key = $1', [
      'idem-activated',
      new Date(deadAt),
    ]);

    manual.set(deadAt + takeoverAfterMs);
    const retry = await createSession(broker.url, body, API_KEY, 'idem-activated').expect(201);
    expect(retry.body).toEqual(first.body);
    expect(await sessionsOf(pair)).toEqual([{ id: first.body.id, status: 'active', idempotency_key: 'idem-activated' }]);
    const again = await createSession(broker.url, body, API_KEY, 'idem-activated').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(retry.text);
  });

  it.each([
    ['a space', 'has space'],
    ['256 characters', 'k'.repeat(256)],
    ['a control character', 'tab\there'],
  ])('refuses a key with %s with a 400 naming Idempotency-Key, making no session', async (_name, key) => {
    const pair = freshPair();
    const res = await createSession(broker.url, sessionBody(pair), API_KEY, key).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM sessions WHERE participants = $1', [pair]);
    expect(rows[0].n).toBe(0);
  });

  it('keeps nothing for a request the route’s pipes refuse: the key then takes a body that passes', async () => {
    const pair = freshPair();
    const refused = await createSession(broker.url, { ...sessionBody(pair), ttlSeconds: 5 }, API_KEY, 'idem-pipes').expect(400);
    expect(refused.body.errors).toEqual([{ field: 'ttlSeconds', message: expect.any(String) }]);
    expect(await recordOf('idem-pipes')).toBeUndefined();
    const created = await createSession(broker.url, sessionBody(pair), API_KEY, 'idem-pipes').expect(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    expect(await recordOf('idem-pipes')).toEqual({ response_status: 201 });
  });

  it('refuses a body nested deeper than the pipes take with their 400, hashing nothing', async () => {
    // Sent as text: 10 000 levels are more than a client's serializer (or a recursive hash) has stack for.
    const body = JSON.stringify({ ...sessionBody(freshPair()), metadata: { deep: '@' } }).replace(
      '"@"',
      `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
    );
    const res = await request(broker.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${API_KEY}`)
      .set('idempotency-key', 'idem-deep')
      .set('content-type', 'application/json')
      .send(body)
      .expect(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: expect.stringMatching(/nests deeper/) }]);
    expect(await recordOf('idem-deep')).toBeUndefined();
  });

  it('takes a key of 255 printable characters', async () => {
    await createSession(broker.url, sessionBody(freshPair()), API_KEY, '~'.repeat(255)).expect(201);
  });

  it('remembers a key for 24 h and forgets it from then on, the sweeper purging it', async () => {
    const manual = manualClock();
    const start = manual.now();
    const first = await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-24h').expect(201);

    manual.set(start + DAY_MS - 1);
    await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-24h').expect(422);
    await broker.app.get(IdempotencyService).purgeExpired();
    expect(await recordOf('idem-24h')).toEqual({ response_status: 201 });

    manual.set(start + DAY_MS);
    const fresh = await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-24h').expect(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.body.id).not.toBe(first.body.id);

    await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'idem-24h-purged').expect(201);
    manual.set(start + 2 * DAY_MS);
    expect(await broker.app.get(IdempotencyService).purgeExpired()).toBeGreaterThanOrEqual(1);
    expect(await recordOf('idem-24h-purged')).toBeUndefined();
  });
});
