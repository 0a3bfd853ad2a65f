/**
 * SessionMoveRepository on a real PostgreSQL: planning is once per session and outage, a move takes a number
 * under the pool rule and the participant limit (the database's indexes, not the code, are what hold them),
 * the savepoint undoes a number whose bind failed, concurrent claims never take one row twice, and a replica
 * that no longer holds the breaker lease cannot commit a move.
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions, PoolStatements } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { EventOutbox } from '../notifications';
import { BREAKER_LEASE } from '../providers/provider-state.repository';
import { Session } from '../sessions/session.entity';
import { SessionReservationRepository } from '../sessions/session-reservation.repository';
import { LeadershipLostError, SessionMoveRepository, type OutageKey } from './session-move.repository';

const ACCOUNT = '00000000-0000-4000-8000-0000000000a1';
const OTHER = '00000000-0000-4000-8000-0000000000b2';
const LIMIT = 2;
const FENCE = { holder: 'spec-leader', epoch: 1 };

let seq = 0;
const pair = (): [string, string] => {
  seq += 2;
  return [`+23480500${String(seq).padStart(5, '0')}`, `+23480500${String(seq + 1).padStart(5, '0')}`];
};

describe('SessionMoveRepository', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let moves: SessionMoveRepository;
  const now = () => new Date();
  const outage: OutageKey = { provider: 'primary', openedAt: new Date(Date.now() - 60_000) };

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 4 })).initialize();
    moves = new SessionMoveRepository(dataSource, new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 }));
    await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'rescued'), ($2, 'other')`, [ACCOUNT, OTHER]);
    await dataSource.query(`INSERT INTO cluster_leases (name, holder, epoch, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour')`, [
      BREAKER_LEASE,
      FENCE.holder,
      FENCE.epoch,
    ]);
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM session_moves');
    await dataSource.query('DELETE FROM sessions');
    await dataSource.query('DELETE FROM proxy_numbers');
  });

  async function number(provider: string, value: string, accountId: string | null = null): Promise<string> {
    const [row] = await dataSource.query<Array<{ id: string }>>(
      `INSERT INTO proxy_numbers (provider, number, account_id) VALUES ($1, $2, $3) RETURNING id`,
      [provider, value, accountId],
    );
    return row.id;
  }

  /** An active session on `provider`, reserved as a create reserves it. */
  async function active(provider: string, participants: [string, string], accountId = ACCOUNT): Promise<Session> {
    const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 });
    const result = await new SessionReservationRepository(new PoolStatements(dataSource), outbox).reserve({
      sessionId: randomUUID(),
      accountId,
      provider,
      channels: ['sms'],
      sortedNumbers: [...participants].sort(),
      participants,
      loadOrder: [],
      ttlSeconds: 3600,
      callbackUrl: null,
      metadata: {},
      idempotencyKey: null,
      // Set up freely: the limit under test is the move's.
      participantLimit: 1000,
      // No quarantine here: the rules under test are the move's.
      quarantineSeconds: 0,
      now: now(),
    });
    if (!result.reserved) throw new Error(`nothing reserved on ${provider}`);
    await dataSource.query(`UPDATE sessions SET status = 'active' WHERE id = $1`, [result.reserved.id]);
    return dataSource.getRepository(Session).findOneByOrFail({ id: result.reserved.id });
  }

  const claim = (work: Parameters<SessionMoveRepository['transaction']>[0]) => moves.transaction(work);

  it('plans one move per active session of the accounts on the provider, once per outage; a cancelled one may be planned again', async () => {
    await number('primary', '+2349010000001');
    await number('failover', '+2349020000001');
    const mine = [await active('primary', pair()), await active('primary', pair())];
    await active('primary', pair(), OTHER);
    await active('failover', pair());
    const ended = await active('primary', pair());
    await dataSource.query(`UPDATE sessions SET status = 'closed' WHERE id = $1`, [ended.id]);

    expect(await moves.plan(outage, [ACCOUNT], now(), FENCE)).toBe(2);
    expect(await moves.plan(outage, [ACCOUNT], now(), FENCE)).toBe(0);
    const rows = await dataSource.query<Array<{ session_id: string; status: string }>>('SELECT session_id, status FROM session_moves');
    expect(rows.map((r) => r.session_id).sort()).toEqual(mine.map((s) => s.id).sort());
    // Another outage of the same provider is another move.
    expect(await moves.plan({ ...outage, openedAt: new Date(outage.openedAt.getTime() + 1) }, [ACCOUNT], now(), FENCE)).toBe(2);

    await dataSource.query(`UPDATE session_moves SET status = 'cancelled'`);
    expect(await moves.plan(outage, [ACCOUNT], now(), FENCE)).toBe(2);
  });

  it('takes a number where neither participant is active, dedicated numbers first, and never two sessions of one person on one number', async () => {
    await number('primary', '+2349010000001');
    const shared = [await number('failover', '+2349020000001'), await number('failover', '+2349020000002')];
    const [rider, driver] = pair();
    const session = await active('primary', [rider, driver]);
    // The rider already talks to someone else on the first failover number.
    await active('failover', [rider, pair()[0]]);

    const taken = await claim((tx) => tx.takeNumber(session, 'failover', LIMIT, [], now()));
    expect(taken).toMatchObject({ taken: true, proxyNumberId: shared[1] });
    const rows = await dataSource.query<Array<{ proxy_number_id: string }>>(
      'SELECT proxy_number_id FROM session_participants WHERE session_id = $1 AND active',
      [session.id],
    );
    expect(rows.map((r) => r.proxy_number_id)).toEqual([shared[1], shared[1]]);

    // Dedicated to the account: before the shared pool.
    const dedicated = await number('failover', '+2349020000009', ACCOUNT);
    const next = await active('primary', pair());
    expect(await claim((tx) => tx.takeNumber(next, 'failover', LIMIT, [], now()))).toMatchObject({ taken: true, proxyNumberId: dedicated });

    // Every number holds the rider now: nothing for a third session of theirs.
    await active('failover', [rider, pair()[0]]);
    await dataSource.query('UPDATE proxy_numbers SET enabled = false WHERE id = $1', [dedicated]);
    const third = await active('primary', [rider, pair()[1]]);
    expect(await claim((tx) => tx.takeNumber(third, 'failover', 1000, [], now()))).toEqual({ taken: false, overLimit: null });
  });

  it('keeps the participant limit: a session that holds shared slots keeps them, one on a dedicated number needs a free one', async () => {
    await number('failover', '+2349020000001');
    await number('failover', '+2349020000002');
    await number('failover', '+2349020000003');
    await number('primary', '+2349010000001');
    const [person] = pair();
    // Two shared-pool sessions with `person` (the limit), one on the primary's shared number and one on the failover.
    const onShared = await active('primary', [person, pair()[0]]);
    await active('failover', [person, pair()[0]]);
    // A third on a number dedicated to the account: not counted.
    const dedicated = await number('primary', '+2349010000009', ACCOUNT);
    const onDedicated = await active('primary', [person, pair()[0]]);
    expect(onDedicated.proxyNumberId).toBe(dedicated);

    // The shared one moves: it keeps its slot, the count does not change.
    expect(await claim((tx) => tx.takeNumber(onShared, 'failover', LIMIT, [], now()))).toMatchObject({ taken: true });
    // The dedicated one would be a third on the shared pool: refused, and why.
    expect(await claim((tx) => tx.takeNumber(onDedicated, 'failover', LIMIT, [], now()))).toEqual({
      taken: false,
      overLimit: { number: person, held: LIMIT },
    });
    // With room for one more it takes the lowest free slot.
    expect(await claim((tx) => tx.takeNumber(onDedicated, 'failover', LIMIT + 1, [], now()))).toMatchObject({ taken: true });
    const slots = await dataSource.query<Array<{ shared_slot: number }>>(
      `SELECT shared_slot FROM session_participants WHERE account_id = $1 AND number = $2 AND active ORDER BY shared_slot`,
      [ACCOUNT, person],
    );
    expect(slots.map((s) => s.shared_slot)).toEqual([1, 2, 3]);
  });

  it('undoes a number taken for a bind that failed, and the next provider is asked from where the session was', async () => {
    await number('primary', '+2349010000001');
    await number('failover', '+2349020000001');
    const session = await active('primary', pair());
    await claim(async (tx) => {
      expect(await tx.takeNumber(session, 'failover', LIMIT, [], now())).toMatchObject({ taken: true });
      await tx.undoNumber();
    });
    const rows = await dataSource.query<Array<{ proxy_number_id: string }>>(
      'SELECT proxy_number_id FROM session_participants WHERE session_id = $1',
      [session.id],
    );
    expect(rows.map((r) => r.proxy_number_id)).toEqual([session.proxyNumberId, session.proxyNumberId]);
  });

  it('never gives one move to two claims at once, and a claim waits for no one', async () => {
    await number('primary', '+2349010000001');
    await active('primary', pair());
    await active('primary', pair());
    await moves.plan(outage, [ACCOUNT], now(), FENCE);
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    let first: string | undefined;
    const holding = claim(async (tx) => {
      first = (await tx.claimNext([outage], now()))?.move.id;
      await held;
    });
    await new Promise((done) => setTimeout(done, 50));
    const second = await claim(async (tx) => (await tx.claimNext([outage], now()))?.move.id);
    const third = await claim(async (tx) => (await tx.claimNext([outage], now()))?.move.id);
    release();
    await holding;
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    // The first is still held; the second was let go unsettled: the third claim takes it again.
    expect(third).toBe(second);
    // Only moves of the outages asked for are claimed.
    expect(await claim(async (tx) => tx.claimNext([{ ...outage, openedAt: new Date(0) }], now()))).toBeNull();
  });

  it('lets no move commit once the lease is another replica’s, and plans nothing then', async () => {
    await number('primary', '+2349010000001');
    await active('primary', pair());
    const stale = { holder: FENCE.holder, epoch: FENCE.epoch + 1 };
    await expect(moves.plan(outage, [ACCOUNT], now(), stale)).rejects.toBeInstanceOf(LeadershipLostError);
    await moves.plan(outage, [ACCOUNT], now(), FENCE);
    const attempt = claim(async (tx) => {
      const claimed = await tx.claimNext([outage], now());
      await tx.settle(claimed!.move, 'cancelled', 'spec', now());
      await tx.assertLeading(stale);
    });
    await expect(attempt).rejects.toBeInstanceOf(LeadershipLostError);
    const [row] = await dataSource.query<Array<{ status: string }>>('SELECT status FROM session_moves');
    expect(row.status).toBe('pending');
  });
});
