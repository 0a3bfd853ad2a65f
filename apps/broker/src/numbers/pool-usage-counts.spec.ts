/**
 * Pool usage as counts kept with the sessions (issue #34 item 3, migration PoolUsageCounts), on a real PostgreSQL: what
 * ProxyNumberRepository.poolUsage reads from the totals and the changes not folded yet is, after every kind of write
 * to `sessions`, what a scan of the active sessions counts: creates on both paths, a pending reservation and its release,
 * a close, the sweeper's expiry (time and idle), a session moved to another number, deletions, a truncation, concurrent creates while
 * the totals are folded.
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions, PoolStatements } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { JOB_LOCKS } from '../database/exclusive';
import { EventOutbox } from '../notifications';
import type { Channel } from './proxy-number.entity';
import { ProxyNumberRepository, type PoolUsageRows } from './proxy-number.repository';
import { expireLapsed } from '../sessions/expire-lapsed';
import { activeDraft, pendingSession } from '../sessions/session-allocator';
import { sessionCreated } from '../sessions/session-events';
import { ended } from '../sessions/session-expiry';
import type { Session } from '../sessions/session.entity';
import { PostgresSessionRepository } from '../sessions/session.repository';
import { SessionReservationRepository, type ReservationInput } from '../sessions/session-reservation.repository';

const ACCOUNT = '00000000-0000-0000-0000-0000000000c1';
const SECOND = 1000;

describe('pool usage counted with the sessions (migration PoolUsageCounts)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sessions: PostgresSessionRepository;
  let reservations: SessionReservationRepository;
  let repository: ProxyNumberRepository;
  const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 });
  let seq = 0;
  const person = () => `+23480330${String((seq += 1)).padStart(5, '0')}`;

  const input = (at: number, extra: Partial<ReservationInput> = {}): ReservationInput => {
    const participants: [string, string] = [person(), person()];
    return {
      sessionId: randomUUID(),
      accountId: ACCOUNT,
      provider: 'c',
      channels: ['sms'],
      sortedNumbers: [...participants].sort(),
      participants,
      loadOrder: [],
      ttlSeconds: 3600,
      callbackUrl: null,
      metadata: {},
      idempotencyKey: null,
      participantLimit: 1000,
      quarantineSeconds: 0,
      now: new Date(at),
      ...extra,
    };
  };
  /** The simulator's path: a reservation (pending), then its activation. */
  async function reserveThenActivate(at: number, extra: Partial<ReservationInput> = {}): Promise<Session> {
    const request = input(at, extra);
    const { reserved } = await reservations.reserve(request);
    const session: Session = { ...pendingSession(request, reserved!), status: 'active' };
    expect(await sessions.activate(session, sessionCreated(session))).toBe(true);
    return session;
  }
  /** A provider without sessions: one statement. */
  async function createInOne(at: number, extra: Partial<ReservationInput> = {}): Promise<Session> {
    const request = input(at, extra);
    const { reserved } = await reservations.create(request, sessionCreated(activeDraft(request)));
    return { ...pendingSession(request, reserved!), status: 'active' };
  }
  const close = (session: Session, at: number) => sessions.transaction((tx) => tx.end([ended(session, new Date(at))]));
  const sweep = (at: number) => expireLapsed(sessions, new Date(at), (tx) => tx.lockExpired(100, new Date(at)));

  /** What the refresh reads, in a stable order. */
  async function counted(): Promise<Pick<PoolUsageRows, 'perNumber' | 'perChannels'>> {
    const { perNumber, perChannels } = await repository.poolUsage(JOB_LOCKS.poolUsageFold);
    return {
      perNumber: [...perNumber].sort((a, b) => a.proxy_number_id.localeCompare(b.proxy_number_id)),
      perChannels: [...perChannels].sort((a, b) => `${a.provider}${a.channels}`.localeCompare(`${b.provider}${b.channels}`)),
    };
  }
  /** What a scan of every active session counts (the refresh's query before the counts). */
  async function scanned(): Promise<Pick<PoolUsageRows, 'perNumber' | 'perChannels'>> {
    const perNumber: PoolUsageRows['perNumber'] = await dataSource.query(
      `SELECT provider, proxy_number_id, count(*)::int AS active FROM sessions WHERE status = 'active'
        GROUP BY provider, proxy_number_id ORDER BY proxy_number_id`,
    );
    const perChannels: PoolUsageRows['perChannels'] = await dataSource.query(
      `SELECT provider, array_to_string(channels, '+') AS channels, count(*)::int AS active FROM sessions WHERE status = 'active'
        GROUP BY provider, channels ORDER BY provider || array_to_string(channels, '+')`,
    );
    return { perNumber, perChannels };
  }
  const total = async () => (await counted()).perNumber.reduce((sum, row) => sum + row.active, 0);
  const pendingChanges = async () =>
    ((await dataSource.query('SELECT count(*)::int AS n FROM proxy_number_load_changes')) as Array<{ n: number }>)[0].n;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 6 })).initialize();
    sessions = new PostgresSessionRepository(dataSource, outbox, new PoolStatements(dataSource));
    reservations = new SessionReservationRepository(new PoolStatements(dataSource), outbox);
    repository = new ProxyNumberRepository(dataSource);
    await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'c')`, [ACCOUNT]);
    for (let i = 1; i <= 3; i++)
      await dataSource.query(`INSERT INTO proxy_numbers (provider, number, capabilities) VALUES ('c', $1, '{voice,sms}')`, [
        `+23480100000${i}`,
      ]);
    await dataSource.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('d', '+2348010000009')`);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });
  afterEach(async () => {
    await dataSource.query('DELETE FROM sessions');
    expect(await total()).toBe(0);
  });

  it('counts creates on both paths by number and channels, and a reservation only once it is active', async () => {
    const now = Date.now();
    await createInOne(now);
    await createInOne(now, { channels: ['voice', 'sms'] as Channel[] });
    await reserveThenActivate(now);
    await createInOne(now, { provider: 'd' });
    // A reservation still pending carries no load; released, it leaves none.
    const request = input(now);
    await reservations.reserve(request);
    expect(await total()).toBe(4);
    await reservations.release(request.sessionId);
    const after = await counted();
    expect(after).toEqual(await scanned());
    expect(after.perChannels).toEqual([
      { provider: 'c', channels: 'sms', active: 2 },
      { provider: 'c', channels: 'voice+sms', active: 1 },
      { provider: 'd', channels: 'sms', active: 1 },
    ]);
  });

  it('takes a session off when it is closed, and once only when it is closed again', async () => {
    const now = Date.now();
    const [a, b] = [await createInOne(now), await reserveThenActivate(now)];
    expect(await total()).toBe(2);
    await close(a, now + SECOND);
    expect(await counted()).toEqual(await scanned());
    expect(await total()).toBe(1);
    // Ending an ended session again changes no count (the status stays ended).
    await close(a, now + 2 * SECOND);
    await close(b, now + 2 * SECOND);
    expect(await total()).toBe(0);
    expect(await counted()).toEqual({ perNumber: [], perChannels: [] });
  });

  it('keeps a lapsed session (ttl or idle) until the sweeper marks it expired, then not; a touch changes nothing', async () => {
    const now = Date.now();
    await createInOne(now, { ttlSeconds: 60 });
    await createInOne(now, { idleTtlSeconds: 30 });
    const lasting = await createInOne(now);
    // An interaction moves the idle deadline: no count moves with it.
    await dataSource.query(
      `UPDATE sessions SET inactive_at = inactive_at + interval '1 second', last_interaction_at = now() WHERE id = $1`,
      [lasting.id],
    );
    expect(await pendingChanges()).toBe(3);
    // 1 ms before the idle deadline the sweeper finds nothing; at it, the idle session; at 60 s, the other one.
    expect(await sweep(now + 30 * SECOND - 1)).toBe(0);
    expect(await total()).toBe(3);
    expect(await sweep(now + 30 * SECOND)).toBe(1);
    expect(await total()).toBe(2);
    expect(await sweep(now + 60 * SECOND)).toBe(1);
    expect(await total()).toBe(1);
    expect(await counted()).toEqual(await scanned());
  });

  it('moves a session’s load with it to another number or other channels, and drops it when the session is deleted', async () => {
    const now = Date.now();
    const moved = await createInOne(now);
    await createInOne(now);
    const [{ id: other }] = (await dataSource.query(
      `SELECT id FROM proxy_numbers WHERE provider = 'c' AND id <> $1 ORDER BY number DESC LIMIT 1`,
      [moved.proxyNumberId],
    )) as Array<{ id: string }>;
    // As a rescue moving a session to another of the provider's numbers would.
    await dataSource.query(
      `UPDATE sessions SET proxy_number_id = $2, proxy_number = pn.number FROM proxy_numbers pn WHERE sessions.id = $1 AND pn.id = $2`,
      [moved.id, other],
    );
    expect((await counted()).perNumber.find((r) => r.proxy_number_id === other)?.active).toBeGreaterThanOrEqual(1);
    expect(await counted()).toEqual(await scanned());
    await dataSource.query(`UPDATE sessions SET channels = '{voice,sms}' WHERE id = $1`, [moved.id]);
    expect(await counted()).toEqual(await scanned());
    await dataSource.query('DELETE FROM sessions WHERE id = $1', [moved.id]);
    expect(await counted()).toEqual(await scanned());
    expect(await total()).toBe(1);
  });

  it('folds the changes into the totals without losing or doubling one, while creates and other folds run', async () => {
    const now = Date.now();
    const creates = Array.from({ length: 40 }, (_, i) => (i % 2 ? createInOne(now) : reserveThenActivate(now)));
    const folds = Array.from({ length: 6 }, () => repository.poolUsage(JOB_LOCKS.poolUsageFold));
    const made = await Promise.all(creates);
    await Promise.all(folds);
    expect(await total()).toBe(40);
    expect(await counted()).toEqual(await scanned());
    // The read folded what it found: nothing is left over, and the totals alone hold the count.
    expect(await pendingChanges()).toBe(0);
    const [{ n }] = (await dataSource.query('SELECT sum(active)::int AS n FROM proxy_number_loads')) as Array<{ n: number }>;
    expect(n).toBe(40);
    await Promise.all([
      ...made.slice(0, 25).map((s) => close(s, now + SECOND)),
      repository.poolUsage(JOB_LOCKS.poolUsageFold),
      repository.poolUsage(JOB_LOCKS.poolUsageFold),
    ]);
    expect(await total()).toBe(15);
    expect(await counted()).toEqual(await scanned());
  });

  it('empties the counts when the sessions are truncated (the benchmarks’ reset)', async () => {
    const now = Date.now();
    await createInOne(now);
    await repository.poolUsage(JOB_LOCKS.poolUsageFold);
    await createInOne(now);
    await dataSource.query('TRUNCATE sessions, session_participants, interactions, webhook_events, webhook_deliveries CASCADE');
    expect(await counted()).toEqual({ perNumber: [], perChannels: [] });
    await createInOne(now);
    expect(await total()).toBe(1);
  });

  it('starts the totals from the active sessions there are when the migration runs', async () => {
    const now = Date.now();
    await createInOne(now);
    await createInOne(now, { channels: ['voice', 'sms'] as Channel[] });
    await close(await createInOne(now), now + SECOND);
    // Back to just before PoolUsageCounts (later migrations undone first), a create there, then forward again.
    const names = (dataSource.migrations as Array<{ name?: string }>).map((m) => m.name);
    const later = names.length - names.indexOf('PoolUsageCounts1796192000000');
    for (let i = 0; i < later; i++) await dataSource.undoLastMigration();
    await createInOne(now);
    await dataSource.runMigrations();
    expect(await pendingChanges()).toBe(0);
    expect(await total()).toBe(3);
    expect(await counted()).toEqual(await scanned());
  });
});
