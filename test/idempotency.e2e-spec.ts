/**
 * `Idempotency-Key` on POST /v1/sessions against the running broker, each rule from its own state:
 * a 5xx lets go of the key, a stored 4xx is replayed whole, a request still running answers 409
 * once it is older than any create can take, a bad key is a 400, and a record is forgotten after
 * 24 h. Time is the broker's idempotency clock, moved by hand; nothing waits on the wall clock
 * except the provider timeout that keeps the first request running.
 */
import { Client } from 'pg';
import { IDEMPOTENCY_CLOCK, IdempotencyService } from '../apps/broker/src/idempotency/idempotency.service';
import type { Clock } from '../apps/broker/src/notifications/clock';
import { ManualClock } from '../apps/broker/src/notifications/testing/webhook-receiver';
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
    clock = broker.app.get<Clock>(IDEMPOTENCY_CLOCK);
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
    const body = sessionBody(freshPair());
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
    expect(again.body.id).toBe(retried.body.id);
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
    expect(replay.body).toEqual(first.body);
  });

  it('answers 409 while the first request runs longer than any create can take, and waits for it before that', async () => {
    const maxWaitMs = broker.config.providerCallTimeoutMs * (broker.config.providers.length + 1) + 5_000;
    const manual = manualClock();
    const claimedAt = manual.now();
    const body = sessionBody(freshPair());
    // The primary holds the bind until the broker's own timeout; the create then fails over.
    await setFault(broker.sim.url, 'primary', { mode: 'timeout' });
    const first = createSession(broker.url, body, API_KEY, 'idem-409').then((res) => res);
    await eventually(async () => (await recordOf('idem-409')) !== undefined, 100, 20);
    expect(await recordOf('idem-409')).toEqual({ response_status: null });

    manual.set(claimedAt + maxWaitMs);
    const busy = await createSession(broker.url, body, API_KEY, 'idem-409').expect(409);
    expect(busy.body).toMatchObject({ type: '/problems/idempotency-in-progress', status: 409 });
    expect(await recordOf('idem-409')).toEqual({ response_status: null });

    manual.set(claimedAt + maxWaitMs - 1);
    const waited = createSession(broker.url, body, API_KEY, 'idem-409').then((res) => res);
    const made = await first;
    expect(made.status).toBe(201);
    expect(made.body.provider).toBe('failover');
    const replayed = await waited;
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.id).toBe(made.body.id);
  }, 30_000);

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
