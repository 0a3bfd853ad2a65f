/**
 * A session rescue survives `kill -9` of the breaker leader mid-move (issue #36, docs/design.md#session-rescue): two
 * broker processes as `npm start` runs them (the built `dist/apps/broker/src/main.js`), the CPaaS simulator as a
 * process of its own, one PostgreSQL. One account opted in (afterSeconds 1), another did not. The primary goes
 * down and its breaker opens; the leader starts moving the first account's sessions to the failover, paced, each
 * bind on the failover slowed so that a move is in flight most of the time; the leader is killed while one is
 * (its transaction open, waiting on the bind), and the other replica takes the lease over and finishes.
 *
 * What a user would notice: every session of the opted-in account is on the failover, moved exactly once (one
 * `moved` row, one `session.rebound`, two numbers in its history), none lost, the pool rule intact, moves made by
 * the two leaders only; the other account's sessions are still on the primary. Every wait is a bounded count of
 * attempts; no test measures a duration.
 */
import { WebhookReceiver, createTestDatabase, type TestDatabase } from '@app/testing';
import { checkPoolRule, withClient } from '../bench/support/pool-rule';
import {
  BENCH_API_KEY,
  setFault,
  startBrokerProcess,
  startSimulatorProcess,
  waitFor,
  type BrokerProcess,
  type SimulatorProcess,
} from '../bench/support/stack';
import { buildOnce } from './support/processes';

const OTHER_KEY = 'bench-key-bbbbbbbbbbbbbbbbbbbbbbbb';
const RESCUED = 30;
const CONTROL = 10;
const ENV = {
  LOG_LEVEL: 'warn',
  BROKER_API_KEY: `${BENCH_API_KEY},${OTHER_KEY}`,
  SIM_SEED_NUMBERS: '10',
  PROVIDER_CALL_TIMEOUT_MS: '2000',
  // The lease (and so a takeover) in about a second; the primary's checks keep failing meanwhile.
  BREAKER_HEALTH_INTERVAL_MS: '1000',
  BREAKER_LEADER_LEASE_MS: '1000',
  RESCUE_CHECK_INTERVAL_MS: '200',
  RESCUE_MOVES_PER_SECOND: '5',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '100',
};

interface MoveRow {
  session_id: string;
  status: string;
  moved_by: string | null;
  settled_at: Date | null;
}

describe('session rescue through kill -9 of the breaker leader', () => {
  let sim: SimulatorProcess;
  let db: TestDatabase;
  let receiver: WebhookReceiver;
  const brokers: BrokerProcess[] = [];

  beforeAll(async () => {
    buildOnce();
    [sim, db, receiver] = await Promise.all([startSimulatorProcess(), createTestDatabase(), WebhookReceiver.start()]);
  }, 300_000);
  afterAll(async () => {
    for (const broker of brokers) await broker.stop();
    await sim?.stop();
    await receiver?.close();
    await db?.drop();
  }, 60_000);

  const call = async (broker: BrokerProcess, key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${broker.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const create = async (broker: BrokerProcess, key: string, n: number, prefix: string) => {
    const created = await call(broker, key, 'POST', '/v1/sessions', {
      channel: 'sms',
      participants: [
        { number: `+234807${prefix}${String(n).padStart(6, '0')}` },
        { number: `+234808${prefix}${String(n).padStart(6, '0')}` },
      ],
    });
    expect(created.status).toBe(201);
    return created.body as { id: string; provider: string; proxyNumber: string };
  };
  const moves = () =>
    withClient(
      db.url,
      async (client) => (await client.query<MoveRow>('SELECT session_id, status, moved_by, settled_at FROM session_moves')).rows,
    );
  /** A move of the leader's is open now: its number taken, the failover's bind in flight. */
  const moveInFlight = () =>
    withClient(db.url, async (client) => {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'
            AND query LIKE '/* rescue.take_number */%'`,
      );
      return rows[0].n > 0;
    });

  it('moves every session of the opted-in account exactly once, none of the other’s, and the pool rule holds', async () => {
    const leader = await startBrokerProcess(db.url, sim.url, ENV);
    brokers.push(leader);
    const follower = await startBrokerProcess(db.url, sim.url, ENV);
    brokers.push(follower);
    const health = async (broker: BrokerProcess) =>
      (await (await fetch(`${broker.url}/v1/health/cpaas`)).json()) as {
        replica: string;
        leader: string | null;
        providers: Array<{ name: string; state: string }>;
      };
    // The first one started holds the lease.
    await waitFor('a leader known to both', async () => (await health(follower)).leader === (await health(leader)).replica);
    const leaderName = (await health(leader)).replica;
    const followerName = (await health(follower)).replica;

    for (const key of [BENCH_API_KEY, OTHER_KEY])
      expect((await call(follower, key, 'PUT', '/v1/account/callback-url', { callbackUrl: receiver.url })).status).toBe(200);
    // Set on the follower: the leader hears of it through the database.
    expect((await call(follower, BENCH_API_KEY, 'PUT', '/v1/account/rescue', { afterSeconds: 1 })).status).toBe(200);

    const rescued = [];
    for (let n = 0; n < RESCUED; n++) rescued.push(await create(n % 2 ? leader : follower, BENCH_API_KEY, n, '1'));
    const control = [];
    for (let n = 0; n < CONTROL; n++) control.push(await create(follower, OTHER_KEY, n, '2'));
    expect([...rescued, ...control].every((s) => s.provider === 'primary')).toBe(true);

    // The primary goes down; every bind on the failover takes 400 ms, so a move is in flight most of the time.
    await setFault(sim.url, 'primary', { mode: 'down' });
    await setFault(sim.url, 'failover', { mode: 'ok', latencyMs: 400 });
    for (let n = 0; n < 5; n++) expect((await create(leader, OTHER_KEY, n, '3')).provider).toBe('failover');
    await waitFor('the primary OPEN on both', async () =>
      (await Promise.all([leader, follower].map(health))).every((h) => h.providers[0].state === 'OPEN'),
    );

    // Some moved already, one in flight: kill -9 of the leader.
    await waitFor('a few moved', async () => (await moves()).filter((m) => m.status === 'moved').length >= 5, 600, 50);
    await waitFor('a move in flight', moveInFlight, 600, 10);
    await leader.kill9();
    expect((await leader.exited).signal).toBe('SIGKILL');
    // PostgreSQL sees the connections close and rolls the open move back.
    await waitFor('the killed move rolled back', async () => !(await moveInFlight()), 300, 50);
    const movedByLeader = (await moves()).filter((m) => m.status === 'moved').length;
    expect(movedByLeader).toBeLessThan(RESCUED);

    // The follower takes the lease over and carries on.
    await waitFor('the follower leads', async () => (await health(follower)).leader === followerName, 300, 100);
    await waitFor('every session moved', async () => (await moves()).filter((m) => m.status === 'moved').length >= RESCUED, 600, 100);
    // A few more passes: nothing moves twice.
    await new Promise((done) => setTimeout(done, 1_000));

    const rows = await moves();
    const ids = new Set(rescued.map((s) => s.id));
    expect(rows.filter((m) => !ids.has(m.session_id))).toEqual([]);
    const perSession = new Map<string, MoveRow[]>();
    for (const row of rows.filter((m) => m.status !== 'cancelled'))
      perSession.set(row.session_id, [...(perSession.get(row.session_id) ?? []), row]);
    expect([...ids].filter((id) => perSession.get(id)?.length !== 1 || perSession.get(id)![0].status !== 'moved')).toEqual([]);
    // Made by the two leaders, the killed one before the kill and the follower after.
    const by = (name: string) => rows.filter((m) => m.moved_by === name).length;
    expect(by(leaderName)).toBe(movedByLeader);
    expect(by(leaderName) + by(followerName)).toBe(RESCUED);
    // Paced: each leader's moves at least 1 / RESCUE_MOVES_PER_SECOND (200 ms) apart. A lower bound, which a loaded
    // machine can only make easier to meet.
    for (const name of [leaderName, followerName]) {
      const times = rows
        .filter((m) => m.moved_by === name)
        .map((m) => m.settled_at!.getTime())
        .sort((a, b) => a - b);
      const gaps = times.slice(1).map((t, i) => t - times[i]);
      expect(gaps.filter((gap) => gap < 190)).toEqual([]);
    }

    for (const s of rescued) {
      const read = await call(follower, BENCH_API_KEY, 'GET', `/v1/sessions/${s.id}`);
      expect(read.body).toMatchObject({ status: 'active', provider: 'failover' });
      expect((read.body.numberHistory as Array<{ provider: string }>).map((n) => n.provider)).toEqual(['primary', 'failover']);
    }
    for (const s of control) expect((await call(follower, OTHER_KEY, 'GET', `/v1/sessions/${s.id}`)).body.provider).toBe('primary');
    expect(await checkPoolRule(db.url)).toMatchObject({ violations: 0, unguarded: 0 });

    // One session.rebound per session, recorded once and delivered (a redelivery would carry the same event id).
    const recorded = await withClient(
      db.url,
      async (client) =>
        (
          await client.query<{ session_id: string; n: number }>(
            `SELECT session_id, count(*)::int AS n FROM webhook_events WHERE type = 'session.rebound' GROUP BY session_id`,
          )
        ).rows,
    );
    expect(recorded.length).toBe(RESCUED);
    expect(recorded.every((r) => ids.has(r.session_id) && r.n === 1)).toBe(true);
    const reboundIds = () =>
      new Map(
        receiver.received
          .map((r) => JSON.parse(r.body) as { id: string; type: string; data: { session: { id: string } } })
          .filter((e) => e.type === 'session.rebound')
          .map((e) => [e.data.session.id, e.id]),
      );
    await waitFor('every rebound delivered', async () => reboundIds().size === RESCUED, 300, 100);
    const deliveredEvents = new Set(
      receiver.received
        .map((r) => JSON.parse(r.body) as { id: string; type: string })
        .filter((e) => e.type === 'session.rebound')
        .map((e) => e.id),
    );
    expect(deliveredEvents.size).toBe(RESCUED);
  }, 240_000);
});
