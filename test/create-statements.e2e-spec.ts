/**
 * No database round trip or lock of the breaker on the path of a create (docs/operations.md): the statements a
 * create runs are counted where they leave for PostgreSQL, on the connections of the broker's pool (whether
 * TypeORM or PoolStatements sent them), on the breaker leader and on a follower.
 * Admission reads memory only; each replica's outcome goes to the others in a NOTIFY sent after the
 * create answered, off its path.
 */
import { DataSource } from 'typeorm';
import request from 'supertest';
import { driverPool } from '@app/database';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, startSimulator, type BrokerHarness, type SimulatorHarness } from './support/broker-harness';
import { eventually } from './support/processes';

const BREAKER_TABLES = /provider_states|cluster_leases|breaker_transitions|pg_advisory/i;
const BREAKER_CHANNELS = ['broker_breaker_outcomes', 'broker_provider_state'];

interface Statement {
  query: string;
  parameters: unknown[];
}

/** The name in a statement's leading comment (as `session.reserve`), else its text. */
function statementName(s: Statement): string {
  return /^\s*\/\* ([\w.-]+) \*\//.exec(s.query)?.[1] ?? s.query;
}

/** A replica's outcome batch on its timer: sent after the bind, never awaited by the create. */
function isOutcomeBatch(s: Statement): boolean {
  return /pg_notify/.test(s.query) && s.parameters.includes('broker_breaker_outcomes');
}

/** A statement of the breaker's: its tables, a lock, or a NOTIFY on one of its channels. */
function breakers(statements: Statement[]): string[] {
  return statements
    .filter(
      (s) =>
        BREAKER_TABLES.test(s.query) || (/pg_notify/.test(s.query) && s.parameters.some((p) => BREAKER_CHANNELS.includes(p as string))),
    )
    .map((s) => s.query);
}

/**
 * Every statement sent on `broker`'s database pool from now on, in the order sent: each connection's `query` is
 * wrapped the first time the pool hands it out.
 */
function poolLog(broker: BrokerHarness): Statement[] {
  const log: Statement[] = [];
  const wrapped = new WeakSet<object>();
  driverPool(broker.app.get(DataSource)).on('acquire', (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const send = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, values?: unknown, ...rest: unknown[]) => {
      const text = typeof config === 'string' ? config : (config as { text: string }).text;
      const parameters = Array.isArray(values) ? values : ((config as { values?: unknown[] }).values ?? []);
      log.push({ query: text, parameters });
      return send(config, values, ...rest);
    };
  });
  return log;
}

describe('the statements of a create', () => {
  let sim: SimulatorHarness;
  let leader: BrokerHarness;
  let follower: BrokerHarness;
  const logs = new Map<BrokerHarness, Statement[]>();

  beforeAll(async () => {
    sim = await startSimulator();
    // Long intervals: no lease claim, pool-usage read, sweep, relay retry or webhook poll runs in the
    // background while a create is counted.
    const env = {
      ...AUTH_ENV,
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      POOL_USAGE_REFRESH_MS: '0',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
      RELAY_RETRY_INTERVAL_MS: '3600000',
      WEBHOOK_POLL_INTERVAL_MS: '3600000',
      // The outcome leaves on the batch timer, not awaited by the create; the longest batch keeps it out of
      // the counted window unless the machine is so loaded that a create takes a second.
      BREAKER_OUTCOME_BATCH_MS: '1000',
    };
    leader = await startBroker(env, { sim });
    follower = await startBroker(env, { sim, db: leader.db });
    for (const broker of [leader, follower]) logs.set(broker, poolLog(broker));
  });
  afterAll(async () => {
    await follower?.app.close();
    await leader?.close();
    await sim?.app.close();
  });

  /** Every statement `broker` sends while `work` runs, and a way to read the ones after. */
  async function statementsOf(
    broker: BrokerHarness,
    work: () => Promise<unknown>,
  ): Promise<{ during: Statement[]; all: () => Statement[] }> {
    const log = logs.get(broker)!;
    const start = log.length;
    await work();
    const during = log.slice(start);
    return { during, all: () => log.slice(start) };
  }

  it('runs the same statements on the leader and on a follower, none of them the breaker’s', async () => {
    await createSession(leader.url, sessionBody(freshPair())).expect(201); // warm both paths once
    await createSession(follower.url, sessionBody(freshPair())).expect(201);

    const onLeader = await statementsOf(leader, () => createSession(leader.url, sessionBody(freshPair())).expect(201));
    const onFollower = await statementsOf(follower, () => createSession(follower.url, sessionBody(freshPair())).expect(201));

    const leaderPath = onLeader.during.filter((s) => !isOutcomeBatch(s));
    expect(leaderPath.length).toBeGreaterThan(0);
    expect(breakers(leaderPath)).toEqual([]);
    const followerPath = onFollower.during.filter((s) => !isOutcomeBatch(s));
    expect(breakers(followerPath)).toEqual([]);
    // Admission added nothing on the follower: the same statements, in the same number, as on the leader.
    expect(followerPath.length).toBe(leaderPath.length);

    // Each one's outcome leaves afterwards, in one NOTIFY of a batch, so every replica counts the cluster's outcomes.
    for (const replica of [onLeader, onFollower]) {
      await eventually(async () => breakers(replica.all()).length > 0, 100, 100);
      expect(breakers(replica.all())).toEqual(['SELECT pg_notify($1, $2)']);
    }
  });

  it('runs the same statements for a session with both channels as for one with one (issue #28)', async () => {
    const both = (pair: [string, string]) => sessionBody(pair, { channel: undefined, channels: ['voice', 'sms'] });
    await createSession(leader.url, both(freshPair())).expect(201);
    const one = await statementsOf(leader, () => createSession(leader.url, sessionBody(freshPair())).expect(201));
    const two = await statementsOf(leader, () => createSession(leader.url, both(freshPair())).expect(201));
    expect(one.during.length).toBeGreaterThan(0);
    expect(two.during.map((s) => s.query)).toEqual(one.during.map((s) => s.query));
  });

  it('binds between two statements on a provider that keeps sessions: the reservation, then the activation (issue #34)', async () => {
    await createSession(leader.url, sessionBody(freshPair())).expect(201);
    const create = await statementsOf(leader, () => createSession(leader.url, sessionBody(freshPair())).expect(201));
    expect(create.during.map(statementName)).toEqual(['session.reserve', 'session.activate']);
  });

  it('does not read the allowed destinations: the check answers from memory (issue #19)', async () => {
    await createSession(leader.url, sessionBody(freshPair())).expect(201);
    const create = await statementsOf(leader, () => createSession(leader.url, sessionBody(freshPair())).expect(201));
    expect(create.during.length).toBeGreaterThan(0);
    // The destination query read accounts.allowed_countries and aggregated the pool's numbers.
    expect(
      create.during.map((s) => s.query).filter((q) => /allowed_countries|array_agg|DISTINCT number FROM proxy_numbers/i.test(q)),
    ).toEqual([]);
  });
});

// Issue #34 item 1: on a provider that keeps no sessions (Twilio here, never called by a create) there is nothing to bind
// between a reservation and an activation, so a create is one statement and one commit: the session, its number, its
// participants, its `session.created` event and its delivery. The wake of the delivery workers follows the commit.
describe('the statements of a create on a provider without sessions of its own', () => {
  let broker: BrokerHarness;
  let log: Statement[];
  const numbers = ['+2349030000101', '+2349030000102'];

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      // Nothing listens there: a create that called the vendor would fail.
      PROVIDERS: 'primary=twilio:http://127.0.0.1:9',
      PUBLIC_URL: 'https://broker.example.com',
      PROVIDER_PRIMARY_ACCOUNT_SID: 'AC' + '0123abcd'.repeat(4),
      PROVIDER_PRIMARY_AUTH_TOKEN: 'f00dfeed'.repeat(4),
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      BREAKER_CLOSED_CHECK_INTERVAL_MS: '0',
      POOL_USAGE_REFRESH_MS: '0',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
      RELAY_RETRY_INTERVAL_MS: '3600000',
      WEBHOOK_POLL_INTERVAL_MS: '3600000',
    });
    log = poolLog(broker);
    for (const number of numbers)
      await request(broker.url)
        .post('/v1/admin/numbers')
        .set('authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ provider: 'primary', number })
        .expect(201);
  });
  afterAll(async () => {
    await broker?.close();
  });

  /** A statement named by its leading comment, as every statement on a create's path is. */
  const named = (name: string) => /^[\w.-]+$/.test(name);

  /** The statements the broker sends while `work` runs, by name. */
  async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
    const start = log.length;
    await work();
    return log.slice(start).map(statementName);
  }

  it('is one statement, its event the session as the API answers it; with a callback URL, the wake after it', async () => {
    await createSession(broker.url, sessionBody(freshPair())).expect(201);
    let created: { id: string; proxyNumber: string } = { id: '', proxyNumber: '' };
    expect(
      await statementsOf(async () => (created = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body)),
    ).toEqual(['session.create']);
    expect(numbers).toContain(created.proxyNumber);
    const withCallback = sessionBody(freshPair(), { callbackUrl: 'https://receiver.example.com/hook' });
    // The wake makes the delivery workers run at once (statements of their own, unnamed): the create's are the named ones.
    expect((await statementsOf(() => createSession(broker.url, withCallback).expect(201))).filter(named)).toEqual([
      'session.create',
      'delivery.wake',
    ]);

    // Committed, and its event is the session as a read answers it.
    const read = (await request(broker.url).get(`/v1/sessions/${created.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200)).body;
    const events = (await request(broker.url).get(`/v1/events?session=${created.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200))
      .body.events as Array<{ type: string; data: { session: unknown } }>;
    expect(events.map((e) => e.type)).toEqual(['session.created']);
    expect(events[0].data.session).toEqual(read);
  });

  it('with an Idempotency-Key: the claim, the create and the answer kept', async () => {
    const key = `k-${Date.now()}`;
    const names = await statementsOf(() => createSession(broker.url, sessionBody(freshPair()), API_KEY, key).expect(201));
    expect(names.filter(named)).toEqual(['idempotency.claim', 'session.create', 'idempotency.store', 'idempotency.settled']);
  });
});
