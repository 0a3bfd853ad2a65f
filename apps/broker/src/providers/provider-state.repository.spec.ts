/**
 * The breaker leader's lease and its fencing on a real PostgreSQL (docs/operations.md): one holder at a time,
 * a takeover only once the lease ran out (by the database's clock), the epoch grows with each new
 * holder, and a write under a former leader's fence is dropped whole.
 */
import { DataSource } from 'typeorm';
import { CircuitBreaker, telephonyPolicy, type BreakerTransition } from '@app/circuit-breaker';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { BREAKER_LEASE, ProviderStateRepository } from './provider-state.repository';

const LONG = 60_000;

describe('ProviderStateRepository: the breaker lease', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let repository: ProviderStateRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 3 })).initialize();
    repository = new ProviderStateRepository(dataSource);
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  const open = (): { transition: BreakerTransition; snapshot: ReturnType<CircuitBreaker['toJSON']> } => {
    const breaker = new CircuitBreaker(telephonyPolicy());
    for (let i = 0; i < 5; i++) breaker.record({ kind: 'failure', reason: 'HTTP 503' });
    const snapshot = breaker.toJSON();
    breaker.dispose();
    return {
      transition: {
        from: 'CLOSED',
        to: 'OPEN',
        reason: '5 consecutive failures',
        at: snapshot.since,
        lastError: 'HTTP 503',
        forcedBy: null,
      },
      snapshot,
    };
  };
  const transitions = async (): Promise<number> =>
    ((await dataSource.query('SELECT count(*)::int AS n FROM breaker_transitions')) as Array<{ n: number }>)[0].n;

  it('lets one holder at a time lead, moves on only once the lease ran out, and drops a former leader’s writes', async () => {
    expect(await repository.claimLease(BREAKER_LEASE, 'a', LONG)).toEqual({ holder: 'a', epoch: 1, live: true });
    // B cannot take a live lease; A renews in the same term.
    expect(await repository.claimLease(BREAKER_LEASE, 'b', LONG)).toEqual({ holder: 'a', epoch: 1, live: true });
    expect(await repository.claimLease(BREAKER_LEASE, 'a', LONG)).toEqual({ holder: 'a', epoch: 1, live: true });

    const { transition, snapshot } = open();
    expect(await repository.saveTransition('primary', transition, snapshot, { holder: 'a', epoch: 1 }, '{}', [])).toBe(true);
    expect(await transitions()).toBe(1);

    // A's lease runs out (a renewal of 0 ms stands for a leader that stopped renewing): B takes over, term 2.
    await repository.claimLease(BREAKER_LEASE, 'a', 0);
    expect(await repository.claimLease(BREAKER_LEASE, 'b', LONG)).toEqual({ holder: 'b', epoch: 2, live: true });

    // A, still believing it leads, writes: dropped whole (no history row, no snapshot, no hook run).
    let hooked = 0;
    const hook = async (): Promise<void> => void (hooked += 1);
    const stale = { ...transition, reason: 'from the former leader' };
    expect(await repository.saveTransition('primary', stale, snapshot, { holder: 'a', epoch: 1 }, '{}', [hook])).toBe(false);
    expect(await repository.saveSnapshot('primary', { ...snapshot, healthPasses: 4 }, { holder: 'a', epoch: 1 }, '{}')).toBe(false);
    expect(hooked).toBe(0);
    expect(await transitions()).toBe(1);
    expect((await repository.load('primary'))?.snapshot?.healthPasses).toBe(0);
    // A's claim now only tells it who leads.
    expect(await repository.claimLease(BREAKER_LEASE, 'a', LONG)).toEqual({ holder: 'b', epoch: 2, live: true });

    // B's writes land.
    expect(await repository.saveSnapshot('primary', { ...snapshot, healthPasses: 3 }, { holder: 'b', epoch: 2 }, '{}')).toBe(true);
    expect((await repository.load('primary'))?.snapshot?.healthPasses).toBe(3);

    // B stops cleanly: A takes over at once, in a new term, and B's old fence no longer writes.
    await repository.releaseLease(BREAKER_LEASE, 'b');
    expect(await repository.claimLease(BREAKER_LEASE, 'a', LONG)).toEqual({ holder: 'a', epoch: 3, live: true });
    expect(await repository.saveSnapshot('primary', snapshot, { holder: 'b', epoch: 2 }, '{}')).toBe(false);
  });

  // Issue #19: the ops webhook's wake of the delivery workers goes out after the transition's commit.
  it('tells a transition on transitions$ once it has committed, and none when the write fails', async () => {
    const { transition, snapshot } = open();
    const committed = async (reason: string) =>
      // The pool's other connection: it sees only what has committed.
      (
        (await dataSource.query('SELECT count(*)::int AS n FROM breaker_transitions WHERE reason = $1', [reason])) as Array<{ n: number }>
      )[0].n;
    const seen: number[] = [];
    // A listener's check, as the ops events' wake: what it sees when it is told.
    const checks: Array<Promise<void>> = [];
    const listening = repository.transitions$.subscribe(({ transition: told }) =>
      checks.push(committed(told.reason).then((n) => void seen.push(n))),
    );
    const told = async () => void (await Promise.all(checks));
    const writes = async (): Promise<void> => undefined;
    expect(await repository.saveTransition('after', { ...transition, reason: 'r1' }, snapshot, null, '{}', [writes])).toBe(true);
    await told();
    expect(seen).toEqual([1]);

    const failing = async (): Promise<void> => {
      throw new Error('the ops event could not be written');
    };
    await expect(
      repository.saveTransition('after', { ...transition, reason: 'r2' }, snapshot, null, '{}', [writes, failing]),
    ).rejects.toThrow('could not be written');
    await told();
    expect(seen).toEqual([1]);
    expect(await committed('r2')).toBe(0);
    listening.unsubscribe();
  });

  it('holds a takeover back until a write under the current fence has committed', async () => {
    await repository.releaseLease(BREAKER_LEASE, 'a');
    const { epoch, holder } = await repository.claimLease(BREAKER_LEASE, 'c', 1_500);
    expect(holder).toBe('c');
    // A write in progress holds the lease row; a takeover that starts meanwhile waits for its commit.
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    const rows: unknown[] = await runner.query(
      'SELECT 1 FROM cluster_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > now() FOR SHARE',
      [BREAKER_LEASE, 'c', epoch],
    );
    expect(rows).toHaveLength(1);
    // C's lease runs out while its write is still open.
    await new Promise((done) => setTimeout(done, 1_700));
    let takenOver = false;
    const takeover = repository.claimLease(BREAKER_LEASE, 'd', LONG).then((holder) => {
      takenOver = true;
      return holder;
    });
    await new Promise((done) => setTimeout(done, 200));
    expect(takenOver).toBe(false);
    await runner.commitTransaction();
    await runner.release();
    expect(await takeover).toEqual({ holder: 'd', epoch: epoch + 1, live: true });
  });
});

describe('ProviderStateRepository: the cluster’s health-check cadence', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let repository: ProviderStateRepository;
  const fence = { holder: 'a', epoch: 1 };

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    repository = new ProviderStateRepository(dataSource);
    expect(await repository.claimLease(BREAKER_LEASE, 'a', LONG)).toMatchObject({ holder: 'a', epoch: 1 });
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  /** Sets the provider's last check `ms` before the database's now. */
  const lastCheckedAgo = (ms: number) =>
    dataSource.query(`UPDATE provider_states SET last_check_at = now() - $2 * interval '1 millisecond' WHERE provider = $1`, [
      'primary',
      ms,
    ]);

  it('grants a check only once the cluster’s last one is an interval old, and says when the next is due', async () => {
    expect(await repository.claimHealthCheck('primary', fence, 30_000)).toEqual({ claimed: true }); // never checked
    const early = await repository.claimHealthCheck('primary', fence, 30_000);
    expect(early.claimed).toBe(false);
    expect(!early.claimed && early.dueInMs).toBeGreaterThan(29_000);
    expect(!early.claimed && early.dueInMs).toBeLessThanOrEqual(30_000);

    await lastCheckedAgo(29_000);
    expect(await repository.claimHealthCheck('primary', fence, 30_000)).toMatchObject({ claimed: false });
    await lastCheckedAgo(31_000);
    expect(await repository.claimHealthCheck('primary', fence, 30_000)).toEqual({ claimed: true });
    // A check on demand (minimum gap 0) is always granted to the leader.
    expect(await repository.claimHealthCheck('primary', fence, 0)).toEqual({ claimed: true });
    // The provider's row holds no snapshot yet: loading it restores nothing.
    expect(await repository.load('primary')).toMatchObject({ snapshot: null, disabled: false });
  });

  it('refuses a claim to a former leader, and grants it to the new one only an interval after the last claim', async () => {
    await lastCheckedAgo(31_000);
    await repository.claimLease(BREAKER_LEASE, 'a', 0);
    expect(await repository.claimLease(BREAKER_LEASE, 'b', LONG)).toMatchObject({ holder: 'b', epoch: 2 });
    expect(await repository.claimHealthCheck('primary', fence, 30_000)).toEqual({ claimed: false, dueInMs: null });
    // A's last check, 10 s before B took over: B's first comes 20 s later, not at once.
    await lastCheckedAgo(10_000);
    const takeover = await repository.claimHealthCheck('primary', { holder: 'b', epoch: 2 }, 30_000);
    expect(!takeover.claimed && takeover.dueInMs).toBeGreaterThan(19_000);
    expect(!takeover.claimed && takeover.dueInMs).toBeLessThanOrEqual(20_000);
    await lastCheckedAgo(30_001);
    expect(await repository.claimHealthCheck('primary', { holder: 'b', epoch: 2 }, 30_000)).toEqual({ claimed: true });
  });
});

describe('ProviderStateRepository: operators’ overrides, taken by the leader or withdrawn, never both', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let repository: ProviderStateRepository;
  const fence = { holder: 'leader', epoch: 1 };
  const PROVIDERS = ['primary', 'failover'];
  const WAIT = 5_000;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    repository = new ProviderStateRepository(dataSource);
    expect(await repository.claimLease(BREAKER_LEASE, 'leader', LONG)).toMatchObject({ holder: 'leader', epoch: 1 });
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  const statusOf = async (id: string): Promise<{ status: string; applied_by: string | null }> =>
    (
      (await dataSource.query('SELECT status, applied_by FROM breaker_overrides WHERE id = $1', [id])) as Array<{
        status: string;
        applied_by: string | null;
      }>
    )[0];

  it('is taken once, by the lease holder only; once taken it cannot be withdrawn', async () => {
    const id = await repository.requestOverride('primary', 'OPEN', 'vendor outage', 'admin');
    expect(await repository.overrideOutcome(id)).toEqual({ status: 'pending' });
    expect(await repository.claimOverrides({ holder: 'leader', epoch: 0 }, 'old', PROVIDERS, WAIT, id)).toEqual([]);
    expect(await repository.claimOverrides(fence, 'replica-a', PROVIDERS, WAIT, id)).toEqual([
      { id, provider: 'primary', state: 'OPEN', reason: 'vendor outage', requestedBy: 'admin' },
    ]);
    expect(await statusOf(id)).toEqual({ status: 'applied', applied_by: 'replica-a' });
    expect(await repository.claimOverrides(fence, 'replica-a', PROVIDERS, WAIT, id)).toEqual([]);
    expect(await repository.withdrawOverride(id)).toBe(false);
    // Applied, its transition not yet recorded; then recorded, naming the request.
    expect(await repository.overrideOutcome(id)).toEqual({ status: 'applied', transitionAt: null });
    const breaker = new CircuitBreaker(telephonyPolicy());
    breaker.force('OPEN', 'vendor outage', 'admin');
    const status = breaker.status();
    const transition = { from: 'CLOSED', to: 'OPEN', reason: status.reason, at: status.since, lastError: null, forcedBy: 'admin' } as const;
    expect(await repository.saveTransition('primary', transition, breaker.toJSON(), fence, '{}', [], id)).toBe(true);
    breaker.dispose();
    expect(await repository.overrideOutcome(id)).toEqual({ status: 'applied', transitionAt: status.since });
    const [row] = await repository.history('primary', 1);
    expect(row).toMatchObject({ forcedBy: 'admin', overrideId: id, reason: 'vendor outage', to: 'OPEN' });
  });

  it('once withdrawn, no leader takes it', async () => {
    const id = await repository.requestOverride('primary', 'CLOSED', 'fixed', 'admin');
    expect(await repository.withdrawOverride(id)).toBe(true);
    expect(await repository.withdrawOverride(id)).toBe(false);
    expect(await repository.claimOverrides(fence, 'replica-a', PROVIDERS, WAIT)).toEqual([]);
    expect(await repository.overrideOutcome(id)).toEqual({ status: 'withdrawn' });
  });

  it('takes every recent pending request of the providers it has, oldest first; withdraws the ones past the wait', async () => {
    const stale = await repository.requestOverride('primary', 'OPEN', 'asked long ago', 'admin');
    await dataSource.query(`UPDATE breaker_overrides SET requested_at = now() - interval '6 seconds' WHERE id = $1`, [stale]);
    const unknown = await repository.requestOverride('elsewhere', 'OPEN', 'a provider this leader lacks', 'admin');
    const first = await repository.requestOverride('failover', 'OPEN', 'one', 'admin');
    const second = await repository.requestOverride('primary', 'CLOSED', 'two', 'admin');
    const claimed = await repository.claimOverrides(fence, 'replica-a', PROVIDERS, WAIT);
    expect(claimed.map((c) => [c.id, c.reason])).toEqual([
      [first, 'one'],
      [second, 'two'],
    ]);
    expect((await statusOf(stale)).status).toBe('withdrawn');
    expect((await statusOf(unknown)).status).toBe('pending');
  });
});
