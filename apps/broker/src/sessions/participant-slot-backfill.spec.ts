import { DataSource } from 'typeorm';
import { brokerDataSourceOptions, runMigrations } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';

const ACCOUNT = '00000000-0000-0000-0000-00000000000a';
const PERSON = '+2348039999999';

// The participant limit counts the participant rows' own account and slot (RESERVE_SQL). Rows written before
// ParticipantLimitSlots had neither: ParticipantSlotBackfill gives them both, so they keep counting.
describe('migration ParticipantSlotBackfill', () => {
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

  it('gives legacy rows their session’s account, and the active ones on shared numbers a slot above those taken', async () => {
    // Back to the schema before ParticipantSlotBackfill (the later migrations come back with it below).
    const backfillRan = async () =>
      (await dataSource.query(`SELECT 1 FROM migrations WHERE name = 'ParticipantSlotBackfill1796093000000'`)).length > 0;
    while (await backfillRan()) await dataSource.undoLastMigration({ transaction: 'all' });
    await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'a')`, [ACCOUNT]);
    // One number per session (the pool rule); n2 is dedicated to the account.
    for (const n of [1, 2, 3, 4, 5])
      await dataSource.query(`INSERT INTO proxy_numbers (id, provider, number, account_id) VALUES ($1, 'p', $2, $3)`, [
        `00000000-0000-0000-0000-0000000000b${n}`,
        `+23480000000${n}`,
        n === 2 ? ACCOUNT : null,
      ]);
    const rows: Array<[session: number, number: number, active: boolean, slot: number | null]> = [
      [1, 1, true, null], // legacy, shared, active
      [2, 2, true, null], // legacy, dedicated
      [3, 3, false, null], // legacy, ended
      [4, 4, true, 1], // written by today's reservation: slot 1
      [5, 5, true, null], // legacy, shared, active
    ];
    for (const [session, number, active, slot] of rows) {
      const id = `00000000-0000-0000-0000-00000000000${session}`;
      const proxy = `00000000-0000-0000-0000-0000000000b${number}`;
      await dataSource.query(
        `INSERT INTO sessions (id, account_id, channel, status, provider, proxy_number_id, proxy_number, participants, expires_at)
         VALUES ($1, $2, 'sms', 'active', 'p', $3, 'x', '{}', now() + interval '1 hour')`,
        [id, ACCOUNT, proxy],
      );
      await dataSource.query(
        `INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, account_id, shared_slot)
         VALUES ($1, $2, $3, $4, now() + interval '1 hour', $5, $6)`,
        [id, PERSON, proxy, active, slot === null ? null : ACCOUNT, slot],
      );
    }

    await runMigrations(dataSource);

    const after: Array<{ session_id: string; account_id: string; shared_slot: number | null }> = await dataSource.query(
      `SELECT session_id, account_id, shared_slot FROM session_participants ORDER BY session_id`,
    );
    expect(after.map((r) => r.account_id)).toEqual(Array(5).fill(ACCOUNT));
    expect(after.map((r) => r.shared_slot)).toEqual([2, null, null, 1, 3]);
  });
});
