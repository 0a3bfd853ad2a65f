/**
 * The statements relay routing relies on, against a real PostgreSQL, with the time always the caller's (the
 * broker's clock), never the database's: `findActiveFor` finds a session until its inactiveAt and not from it on
 * (ttl and idle), an interaction moves an idle deadline and never revives a session past it, and the reservation
 * takes only numbers that carry every channel and, asked, the first participant's most recent number.
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions, PoolStatements } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { EventOutbox } from '../notifications';
import { PostgresInteractionRepository, type NewInteraction } from '../relay/interaction.repository';
import { pendingSession } from './session-allocator';
import { sessionCreated } from './session-events';
import { SessionReservationRepository, type ReservationInput } from './session-reservation.repository';
import type { Session } from './session.entity';
import { PostgresSessionRepository } from './session.repository';

const ACCOUNT = '00000000-0000-0000-0000-0000000000c1';
const T0 = Date.UTC(2031, 5, 1, 12, 0, 0);
const SECOND = 1_000;

let seq = 0;
function input(extra: Partial<ReservationInput> = {}): ReservationInput {
  seq += 1;
  const pair: [string, string] = [`+23480310${String(seq * 2).padStart(5, '0')}`, `+23480310${String(seq * 2 + 1).padStart(5, '0')}`];
  return {
    sessionId: randomUUID(),
    accountId: ACCOUNT,
    provider: 'p',
    channels: ['sms'],
    sortedNumbers: [...pair].sort(),
    participants: pair,
    loadOrder: [],
    ttlSeconds: 3600,
    callbackUrl: null,
    metadata: {},
    idempotencyKey: null,
    participantLimit: 1000,
    quarantineSeconds: 86_400,
    now: new Date(T0),
    ...extra,
    ...(extra.participants ? { sortedNumbers: [...extra.participants].sort() } : {}),
  };
}

describe('relay routing and the reservation on the broker’s clock', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sessions: PostgresSessionRepository;
  let interactions: PostgresInteractionRepository;
  let reservations: SessionReservationRepository;
  const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 });

  async function live(request: ReservationInput): Promise<Session> {
    const result = await reservations.reserve(request);
    if (!result.reserved) throw new Error('nothing reserved');
    const session = { ...pendingSession(request, result.reserved), status: 'active' as const };
    expect(await sessions.activate(session, sessionCreated(session))).toBe(true);
    return session;
  }
  const found = async (session: Session, from: string, at: number) =>
    (await sessions.findActiveFor('p', session.proxyNumber, from, new Date(at)))?.session.id ?? null;
  const text = (session: Session, from: string): NewInteraction => ({
    id: randomUUID(),
    sessionId: session.id,
    channel: 'sms',
    from,
    to: session.participants.find((n) => n !== from)!,
    text: 'hi',
    status: 'pending',
    eventId: randomUUID(),
    providerRef: null,
    idempotencyKey: null,
    lastError: null,
    activity: true,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    sessions = new PostgresSessionRepository(dataSource, outbox, new PoolStatements(dataSource));
    interactions = new PostgresInteractionRepository(dataSource, outbox);
    reservations = new SessionReservationRepository(new PoolStatements(dataSource), outbox);
    await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'a')`, [ACCOUNT]);
    const numbers: Array<[string, string]> = [
      ['+2348000000001', '{voice}'],
      ['+2348000000002', '{sms}'],
      ['+2348000000003', '{sms,voice}'],
      ['+2348000000004', '{sms,voice}'],
    ];
    for (const [number, capabilities] of numbers)
      await dataSource.query(`INSERT INTO proxy_numbers (provider, number, capabilities) VALUES ('p', $1, $2)`, [number, capabilities]);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('finds a session 1 ms before its expiresAt and not at it, whatever the database’s own time (ttl)', async () => {
    // T0 is years ahead of the database's now(): only the time passed in decides.
    const session = await live(input({ ttlSeconds: 60 }));
    const [a] = session.participants;
    expect(session.expiresAt.getTime()).toBe(T0 + 60 * SECOND);
    expect(await found(session, a, T0 + 60 * SECOND - 1)).toBe(session.id);
    expect(await found(session, a, T0 + 60 * SECOND)).toBeNull();
    expect(await found(session, a, T0 + 120 * SECOND)).toBeNull();
  });

  it('finds a session idleTtlSeconds after its last interaction minus 1 ms and not at it; a record at the deadline revives nothing', async () => {
    const session = await live(input({ ttlSeconds: 3600, idleTtlSeconds: 120 }));
    const [a, b] = session.participants;
    expect(session.inactiveAt.getTime()).toBe(T0 + 120 * SECOND);
    expect(await found(session, a, T0 + 120 * SECOND - 1)).toBe(session.id);
    expect(await found(session, a, T0 + 120 * SECOND)).toBeNull();

    // An interaction 1 ms before the deadline moves it on, for both participants.
    const moved = T0 + 120 * SECOND - 1;
    expect(await interactions.record(text(session, a), new Date(moved))).not.toBeNull();
    expect(await found(session, b, moved + 120 * SECOND - 1)).toBe(session.id);
    expect(await found(session, b, moved + 120 * SECOND)).toBeNull();
    const [row] = await dataSource.query(`SELECT inactive_at, last_interaction_at FROM sessions WHERE id = $1`, [session.id]);
    expect(row).toEqual({ inactive_at: new Date(moved + 120 * SECOND), last_interaction_at: new Date(moved) });

    // At the deadline the session is over: a record then is refused and moves nothing.
    expect(await interactions.record(text(session, b), new Date(moved + 120 * SECOND))).toBeNull();
    expect(await found(session, b, moved + 120 * SECOND - 1)).toBe(session.id);
    const counted = await dataSource.query(`SELECT count(*)::int AS n FROM interactions WHERE session_id = $1`, [session.id]);
    expect(counted[0].n).toBe(1);
  });

  it('records an interaction on another channel without moving the idle deadline', async () => {
    const session = await live(input({ idleTtlSeconds: 120 }));
    const [a] = session.participants;
    const stray = { ...text(session, a), channel: 'voice' as const, text: null, status: 'out-of-session' as const, activity: false };
    expect((await interactions.record(stray, new Date(T0 + 60 * SECOND)))?.interaction).toMatchObject({ status: 'out-of-session' });
    expect(await found(session, a, T0 + 120 * SECOND)).toBeNull();
  });

  it('reserves only a number that carries every channel of the session', async () => {
    const voice = await live(input({ channels: ['voice'] }));
    const sms = await live(input({ channels: ['sms'] }));
    const conversation = await live(input({ channels: ['voice', 'sms'] }));
    expect(voice.proxyNumber).toBe('+2348000000001');
    expect(sms.proxyNumber).toBe('+2348000000002');
    expect(conversation.proxyNumber).toBe('+2348000000003');
    const [row] = await dataSource.query(`SELECT channels FROM sessions WHERE id = $1`, [conversation.id]);
    expect(row.channels).toEqual(['voice', 'sms']);
  });

  // The quarantine off (quarantineSeconds 0): the preference as the pool rule alone allows it (with the quarantine,
  // number-quarantine.spec.ts). Each session ends as a close ends it: its rows inactive from that moment.
  it('with prefer-sticky, ranks the first participant’s most recent number first, where the pool rule allows', async () => {
    const rider = '+2348031099001';
    const endAt = (id: string, at: number) =>
      dataSource.query(`UPDATE session_participants SET active = false, expires_at = $2 WHERE session_id = $1`, [id, new Date(at)]);
    const had = await live(
      input({ channels: ['voice', 'sms'], participants: [rider, '+2348031099002'], loadOrder: [], quarantineSeconds: 0 }),
    );
    await endAt(had.id, T0 + SECOND / 2);
    const other = had.proxyNumber === '+2348000000003' ? '+2348000000004' : '+2348000000003';
    const [otherId] = await dataSource.query(`SELECT id FROM proxy_numbers WHERE number = $1`, [other]);
    const [hadId] = await dataSource.query(`SELECT id FROM proxy_numbers WHERE number = $1`, [had.proxyNumber]);
    // The load order ranks the other number first: without the preference, it is taken.
    const order = [otherId.id, hadId.id];
    const later = new Date(T0 + SECOND);

    const usual = await live(
      input({ channels: ['voice', 'sms'], participants: ['+2348031099011', rider], loadOrder: order, now: later, quarantineSeconds: 0 }),
    );
    expect(usual.proxyNumber).toBe(other);
    // The rider's most recent session is now that one, as second participant: the preference follows the rider's rows.
    await endAt(usual.id, T0 + 1.5 * SECOND);
    const sticky = await live(
      input({
        channels: ['voice', 'sms'],
        participants: [rider, '+2348031099003'],
        loadOrder: [hadId.id, otherId.id],
        preferSticky: true,
        now: new Date(T0 + 2 * SECOND),
        quarantineSeconds: 0,
      }),
    );
    expect(sticky.proxyNumber).toBe(other);
    // Active on it now: the pool rule wins, and the next best number is taken.
    const again = await live(
      input({
        channels: ['voice', 'sms'],
        participants: [rider, '+2348031099004'],
        loadOrder: order,
        preferSticky: true,
        now: new Date(T0 + 3 * SECOND),
        quarantineSeconds: 0,
      }),
    );
    expect(again.proxyNumber).toBe(had.proxyNumber);
  });
});
