import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions, PoolStatements } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { EventOutbox } from '../notifications';
import { sessionCreated } from './session-events';
import { ended } from './session-expiry';
import { pendingSession } from './session-allocator';
import type { Session } from './session.entity';
import { PostgresSessionRepository } from './session.repository';
import { SessionReservationRepository, type ReservationInput } from './session-reservation.repository';

const A = '00000000-0000-0000-0000-0000000000a1';
const B = '00000000-0000-0000-0000-0000000000b1';
const SECOND = 1000;
const DAY = 86_400;
/** Years ahead of the database's now(): only the time passed in decides. */
const T0 = Date.UTC(2031, 5, 1, 12, 0, 0);
const N1 = '+2348000000001';
const N2 = '+2348000000002';

// Issue #29 item 4: tenant A's (V, W) on N1 ends; tenant B's (V, X) must not get N1 for the quarantine after it, or V's
// text to the old masked number would reach X. The rule is in the reservation's statement, on the broker's clock.
describe('the proxy-number quarantine in the reservation (SESSION_NUMBER_QUARANTINE_SECONDS)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sessions: PostgresSessionRepository;
  let reservations: SessionReservationRepository;
  const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 });
  let seq = 0;

  /** A participant number no other test uses. */
  const person = () => `+23480320${String((seq += 1)).padStart(5, '0')}`;
  const input = (accountId: string, participants: [string, string], at: number, extra: Partial<ReservationInput> = {}) => ({
    sessionId: randomUUID(),
    accountId,
    provider: 'q',
    channels: ['sms' as const],
    sortedNumbers: [...participants].sort(),
    participants,
    loadOrder: [],
    ttlSeconds: 3600,
    callbackUrl: null,
    metadata: {},
    idempotencyKey: null,
    participantLimit: 3,
    quarantineSeconds: DAY,
    now: new Date(at),
    ...extra,
  });

  /** Reserves and activates; the number taken, or null with what the refusal said. */
  async function create(accountId: string, participants: [string, string], at: number, extra: Partial<ReservationInput> = {}) {
    const request = input(accountId, participants, at, extra);
    const result = await reservations.reserve(request);
    if (!result.reserved) return { session: null, quarantined: result.quarantined };
    const session: Session = { ...pendingSession(request, result.reserved), status: 'active' };
    expect(await sessions.activate(session, sessionCreated(session))).toBe(true);
    return { session, quarantined: 0 };
  }
  const close = (session: Session, at: number) => sessions.transaction((tx) => tx.end([ended(session, new Date(at))]));
  const numberOf = async (...args: Parameters<typeof create>) => (await create(...args)).session?.proxyNumber ?? null;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    sessions = new PostgresSessionRepository(dataSource, outbox, new PoolStatements(dataSource));
    reservations = new SessionReservationRepository(new PoolStatements(dataSource), outbox);
    await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'a'), ($2, 'b')`, [A, B]);
    for (const number of [N1, N2]) await dataSource.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('q', $1)`, [number]);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });
  afterEach(async () => {
    await dataSource.query(`DELETE FROM sessions`);
    await dataSource.query(`UPDATE proxy_numbers SET enabled = true, account_id = NULL`);
  });

  it('keeps a closed session’s number from each participant with anyone else until the quarantine has passed, to the ms', async () => {
    const [v, w, x, y] = [person(), person(), person(), person()];
    const first = (await create(A, [v, w], T0)).session!;
    expect(first.proxyNumber).toBe(N1);
    const closedAt = T0 + 60 * SECOND;
    await close(first, closedAt);
    // Another tenant's session with V, and one of W's with someone new: not on N1 while it lasts.
    expect(await numberOf(B, [v, x], closedAt + 1, { ttlSeconds: 2 * DAY })).toBe(N2);
    expect(await numberOf(A, [y, w], closedAt + DAY * SECOND - 1)).toBe(N2);
    expect(await numberOf(B, [x, person()], closedAt + 2)).toBe(N1);
    // 1 ms before its end nothing is free for V and someone new (N2 carries V's live session with X); at its end, N1 is.
    const z = person();
    expect(await create(B, [z, v], closedAt + DAY * SECOND - 1)).toEqual({ session: null, quarantined: 1 });
    expect(await numberOf(B, [z, v], closedAt + DAY * SECOND)).toBe(N1);
  });

  it('lets the same two people share the number again during the quarantine, in either order and either tenant', async () => {
    const [v, w] = [person(), person()];
    const first = (await create(A, [v, w], T0)).session!;
    await close(first, T0 + SECOND);
    // N2 is the least loaded (N1 carries nothing live either); the pair's own number is not held from them.
    await dataSource.query(`UPDATE proxy_numbers SET enabled = false WHERE number = $1`, [N2]);
    const again = (await create(B, [w, v], T0 + 2 * SECOND)).session!;
    expect(again.proxyNumber).toBe(N1);
  });

  it('runs the quarantine from a session’s end when it expired rather than closed, swept or not', async () => {
    const [v, w, x] = [person(), person(), person()];
    const lapsing = (await create(A, [v, w], T0, { ttlSeconds: 600 })).session!;
    const end = T0 + 600 * SECOND;
    await dataSource.query(`UPDATE proxy_numbers SET enabled = false WHERE number = $1`, [N2]);
    // Not swept: the participant rows are still marked active, past their end.
    expect(await create(B, [v, x], end + DAY * SECOND - 1)).toEqual({ session: null, quarantined: 1 });
    // As SessionAllocator does when the pool rule's index refuses a row past its end: such rows are freed first.
    await reservations.freeExpired('q', B, [v, x], new Date(end + DAY * SECOND));
    expect(await numberOf(B, [v, x], end + DAY * SECOND)).toBe(N1);
    await dataSource.query(`DELETE FROM sessions WHERE id <> $1`, [lapsing.id]);
    // Swept an hour late: the end is still its inactiveAt.
    await close(lapsing, end + 3600 * SECOND);
    expect(await create(B, [v, x], end + DAY * SECOND - 1)).toEqual({ session: null, quarantined: 1 });
    expect(await numberOf(B, [v, x], end + DAY * SECOND)).toBe(N1);
  });

  it('holds a dedicated number too: within one account, a rider’s next driver does not get it', async () => {
    const [rider, driver, next] = [person(), person(), person()];
    await dataSource.query(`UPDATE proxy_numbers SET account_id = $1 WHERE number = $2`, [A, N2]);
    const ride = (await create(A, [rider, driver], T0)).session!;
    expect(ride.proxyNumber).toBe(N2);
    await close(ride, T0 + SECOND);
    expect(await numberOf(A, [rider, next], T0 + 2 * SECOND)).toBe(N1);
  });

  it('with prefer-sticky, gives the first participant their last number again only with the same partner during it', async () => {
    const [rider, driver, next] = [person(), person(), person()];
    const ride = (await create(A, [rider, driver], T0)).session!;
    expect(ride.proxyNumber).toBe(N1);
    await close(ride, T0 + SECOND);
    const ids = Object.fromEntries(
      ((await dataSource.query(`SELECT id, number FROM proxy_numbers`)) as Array<{ id: string; number: string }>).map((r) => [
        r.number,
        r.id,
      ]),
    );
    // The load order ranks N2 first: the preference gives the pair their number back.
    const again = (await create(A, [rider, driver], T0 + 2 * SECOND, { preferSticky: true, loadOrder: [ids[N2], ids[N1]] })).session!;
    expect(again.proxyNumber).toBe(N1);
    await close(again, T0 + 3 * SECOND);
    // With someone else, neither the preference nor the load order gives N1 while the quarantine lasts.
    expect(await numberOf(A, [rider, next], T0 + 4 * SECOND, { preferSticky: true, loadOrder: [ids[N1], ids[N2]] })).toBe(N2);
  });

  it('holds nothing with SESSION_NUMBER_QUARANTINE_SECONDS=0: the pool rule alone, as before', async () => {
    const [v, w, x] = [person(), person(), person()];
    const first = (await create(A, [v, w], T0, { quarantineSeconds: 0 })).session!;
    await dataSource.query(`UPDATE proxy_numbers SET enabled = false WHERE number = $1`, [N2]);
    // Live: the pool rule keeps N1 from V with anyone, and nothing is counted as the quarantine's.
    expect(await create(B, [v, x], T0 + SECOND, { quarantineSeconds: 0 })).toEqual({ session: null, quarantined: 0 });
    await close(first, T0 + 2 * SECOND);
    expect(await numberOf(B, [v, x], T0 + 2 * SECOND, { quarantineSeconds: 0 })).toBe(N1);
  });

  it('says nothing of the quarantine when the pool rule alone is why nothing is free', async () => {
    const [v, w, x] = [person(), person(), person()];
    await dataSource.query(`UPDATE proxy_numbers SET enabled = false WHERE number = $1`, [N2]);
    const first = (await create(A, [v, w], T0)).session!;
    expect(first.proxyNumber).toBe(N1);
    // V is live on N1: no reservation, and no row at all (neither the limit nor the quarantine held anything).
    expect(await create(B, [v, x], T0 + SECOND)).toEqual({ session: null, quarantined: 0 });
    const rows = await dataSource.query(`SELECT partner, number FROM session_participants WHERE session_id = $1 ORDER BY number`, [
      first.id,
    ]);
    expect(rows).toEqual(
      [
        { number: v, partner: w },
        { number: w, partner: v },
      ].sort((a, b) => (a.number < b.number ? -1 : 1)),
    );
  });
});
