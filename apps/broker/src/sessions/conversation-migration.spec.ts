import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions, runMigrations, PoolStatements } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { EventOutbox } from '../notifications';
import { SessionReservationRepository } from './session-reservation.repository';
import { PostgresSessionRepository } from './session.repository';

const ACCOUNT = '00000000-0000-0000-0000-0000000000d1';
const VOICE_NUMBER = '00000000-0000-0000-0000-0000000000e1';
const BOTH_NUMBER = '00000000-0000-0000-0000-0000000000e2';
const LIVE = '00000000-0000-0000-0000-0000000000f1';
const ENDED = '00000000-0000-0000-0000-0000000000f2';

// Migration ConversationSessions on a database written by the previous version: each session keeps its one
// channel (as its only one) and its expiry, sessions already expired expired on their ttl, participant rows
// take their session's creation time, and the numbers keep their capabilities.
describe('migration ConversationSessions', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  it('makes every existing session a single-channel session that behaves as before', async () => {
    const ran = async () =>
      (await dataSource.query(`SELECT 1 FROM migrations WHERE name = 'ConversationSessions1796120000000'`)).length > 0;
    while (await ran()) await dataSource.undoLastMigration({ transaction: 'all' });

    await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'a')`, [ACCOUNT]);
    await dataSource.query(`INSERT INTO proxy_numbers (id, provider, number, capabilities) VALUES ($1, 'p', '+2348000000101', '{voice}')`, [
      VOICE_NUMBER,
    ]);
    await dataSource.query(`INSERT INTO proxy_numbers (id, provider, number) VALUES ($1, 'p', '+2348000000102')`, [BOTH_NUMBER]);
    const sessions: Array<[string, string, string, string, string, string]> = [
      // id, channel, status, number id, created, expires (in milliseconds, as a JavaScript Date reads it back)
      [LIVE, 'voice', 'active', VOICE_NUMBER, `now() - interval '10 minutes'`, `date_trunc('milliseconds', now() + interval '50 minutes')`],
      [ENDED, 'sms', 'expired', BOTH_NUMBER, `now() - interval '2 hours'`, `now() - interval '1 hour'`],
    ];
    for (const [id, channel, status, numberId, created, expires] of sessions) {
      await dataSource.query(
        `INSERT INTO sessions (id, account_id, channel, status, provider, proxy_number_id, proxy_number, participants, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 'p', $5, (SELECT number FROM proxy_numbers WHERE id = $5), '{+2348030000201,+2348030000202}', ${created}, ${expires})`,
        [id, ACCOUNT, channel, status, numberId],
      );
      await dataSource.query(
        `INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, account_id, shared_slot)
         SELECT $1, n, $2, $3, s.expires_at, $4, CASE WHEN $3 THEN 1 END FROM sessions s, unnest(s.participants) AS n WHERE s.id = $1`,
        [id, numberId, status === 'active', ACCOUNT],
      );
    }

    await runMigrations(dataSource);

    const rows = await dataSource.query(
      `SELECT id, channels, inactive_at = expires_at AS same_deadline, expired_reason, idle_ttl_seconds, unique_name, intercept_url
         FROM sessions ORDER BY id`,
    );
    expect(rows).toEqual([
      {
        id: LIVE,
        channels: ['voice'],
        same_deadline: true,
        expired_reason: null,
        idle_ttl_seconds: null,
        unique_name: null,
        intercept_url: null,
      },
      {
        id: ENDED,
        channels: ['sms'],
        same_deadline: true,
        expired_reason: 'ttl',
        idle_ttl_seconds: null,
        unique_name: null,
        intercept_url: null,
      },
    ]);
    const participants = await dataSource.query(
      `SELECT bool_and(sp.created_at = s.created_at) AS same FROM session_participants sp JOIN sessions s ON s.id = sp.session_id`,
    );
    expect(participants).toEqual([{ same: true }]);
    const numbers = await dataSource.query(`SELECT id, capabilities FROM proxy_numbers ORDER BY id`);
    expect(numbers).toEqual([
      { id: VOICE_NUMBER, capabilities: ['voice'] },
      { id: BOTH_NUMBER, capabilities: ['sms', 'voice'] },
    ]);

    // The live voice session is still what a call to its number reaches, until its expiresAt.
    const repository = new PostgresSessionRepository(
      dataSource,
      new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 }),
      new PoolStatements(dataSource),
    );
    const [{ expires_at: expiresAt }] = await dataSource.query(`SELECT expires_at FROM sessions WHERE id = $1`, [LIVE]);
    const routed = await repository.findActiveFor('p', '+2348000000101', '+2348030000201', new Date(expiresAt.getTime() - 1));
    expect(routed?.session).toMatchObject({ id: LIVE, channels: ['voice'] });
    expect(await repository.findActiveFor('p', '+2348000000101', '+2348030000201', expiresAt)).toBeNull();
    // And the pool rule holds it against the same participants on that number, as before; the ended session's number is
    // theirs again (NumberQuarantine gave the old rows their partner: the quarantine holds it from anyone else).
    const reserved = await new SessionReservationRepository(
      new PoolStatements(dataSource),
      new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 }),
    ).reserve({
      sessionId: randomUUID(),
      accountId: ACCOUNT,
      provider: 'p',
      channels: ['voice'],
      sortedNumbers: ['+2348030000201', '+2348030000202'],
      participants: ['+2348030000201', '+2348030000202'],
      loadOrder: [],
      ttlSeconds: 600,
      callbackUrl: null,
      metadata: {},
      idempotencyKey: null,
      participantLimit: 3,
      quarantineSeconds: 86_400,
      now: new Date(),
    });
    expect(reserved.reserved?.proxyNumber).toBe('+2348000000102');
  });
});
