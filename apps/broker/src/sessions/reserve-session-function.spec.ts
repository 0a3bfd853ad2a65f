import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../database/entities';
import { SessionReservationRepository, type ReservationInput } from './session-reservation.repository';

const ACCOUNT = '00000000-0000-0000-0000-00000000000a';

let seq = 0;
function input(): ReservationInput {
  seq += 1;
  const pair: [string, string] = [`+23480300${String(seq * 2).padStart(5, '0')}`, `+23480300${String(seq * 2 + 1).padStart(5, '0')}`];
  return {
    accountId: ACCOUNT,
    provider: 'p',
    channel: 'sms',
    sortedNumbers: [...pair].sort(),
    participants: pair,
    loadOrder: [],
    ttlSeconds: 3600,
    callbackUrl: null,
    metadata: {},
    idempotencyKey: null,
    participantLimit: 3,
  };
}

// Migration ReserveSessionFunction: the reservation's plans are kept for a connection's life, so they must not
// come from statistics that describe the tables nearly empty (a sequential scan kept while the tables grow).
describe('migration ReserveSessionFunction', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'a')`, [ACCOUNT]);
    for (let n = 1; n <= 20; n++)
      await dataSource.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('p', $1)`, [`+2348000000${String(n).padStart(2, '0')}`]);
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  it('reserves on a fresh connection without reading sessions or participants sequentially, after they were analyzed nearly empty', async () => {
    const seeding = new SessionReservationRepository(dataSource);
    for (let i = 0; i < 3; i++) expect((await seeding.reserve(input())).reserved).not.toBeNull();
    await dataSource.query('ANALYZE sessions; ANALYZE session_participants; ANALYZE proxy_numbers');

    const fresh = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 1 })).initialize();
    const stats = new Client({ connectionString: db.url });
    await stats.connect();
    const seqScans = async () => {
      await stats.query('SELECT pg_stat_force_next_flush()');
      const rows: Array<{ n: string }> = (
        await stats.query(
          `SELECT coalesce(sum(seq_scan), 0) AS n FROM pg_stat_user_tables WHERE relname IN ('sessions', 'session_participants')`,
        )
      ).rows;
      return Number(rows[0].n);
    };
    try {
      const repository = new SessionReservationRepository(fresh);
      // Each reservation flushes its backend's statistics on the next call of pg_stat_force_next_flush.
      await fresh.query('SELECT pg_stat_force_next_flush()');
      const before = await seqScans();
      for (let i = 0; i < 10; i++) expect((await repository.reserve(input())).reserved).not.toBeNull();
      await fresh.query('SELECT pg_stat_force_next_flush()');
      expect((await seqScans()) - before).toBe(0);
    } finally {
      await stats.end();
      await fresh.destroy();
    }
  });
});
