/**
 * No database round trip or lock of the breaker on the path of a create (docs/operations.md): the statements a
 * create runs are counted through TypeORM's query events, on the breaker leader and on a follower.
 * Admission reads memory only; each replica's outcome goes to the others in a NOTIFY sent after the
 * create answered, off its path.
 */
import { DataSource } from 'typeorm';
import { AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, startSimulator, type BrokerHarness, type SimulatorHarness } from './support/broker-harness';
import { eventually } from './support/processes';

const BREAKER_TABLES = /provider_states|cluster_leases|breaker_transitions|pg_advisory/i;
const BREAKER_CHANNELS = ['broker_breaker_outcomes', 'broker_provider_state'];

interface Statement {
  query: string;
  parameters: unknown[];
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

describe('the statements of a create', () => {
  let sim: SimulatorHarness;
  let leader: BrokerHarness;
  let follower: BrokerHarness;

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
  });
  afterAll(async () => {
    await follower?.app.close();
    await leader?.close();
    await sim?.app.close();
  });

  /** Every statement `broker` runs while `work` runs, and a way to read the ones after. */
  async function statementsOf(
    broker: BrokerHarness,
    work: () => Promise<unknown>,
  ): Promise<{ during: Statement[]; all: () => Statement[] }> {
    const seen: Statement[] = [];
    let done = false;
    const during: Statement[] = [];
    broker.app.get(DataSource).subscribers.push({
      afterQuery: (event: { query: string; parameters?: unknown[] }) => {
        const statement = { query: event.query, parameters: event.parameters ?? [] };
        seen.push(statement);
        if (!done) during.push(statement);
      },
    } as never);
    await work();
    done = true;
    return { during, all: () => seen };
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
