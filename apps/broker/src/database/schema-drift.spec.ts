import { DataSource } from 'typeorm';
import { MIGRATIONS, brokerDataSourceOptions, pendingSchemaChanges, runMigrations } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from './entities';

// The same diff `npm run migration:check` computes: a test run fails when an entity changed
// without a migration.
describe('entities and migrations', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 1 })).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  it('agree: the migrated schema needs no further change', async () => {
    const { up } = await pendingSchemaChanges(dataSource);
    expect(up).toEqual([]);
  });
});

describe('migrations', () => {
  it('all revert cleanly and apply again', async () => {
    const db = await createTestDatabase();
    const dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    try {
      for (let i = 0; i < MIGRATIONS.length; i++) await dataSource.undoLastMigration({ transaction: 'all' });
      const tables: Array<{ n: number }> = await dataSource.query(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'migrations'`,
      );
      expect(tables[0].n).toBe(0);
      await runMigrations(dataSource);
      expect((await pendingSchemaChanges(dataSource)).up).toEqual([]);
    } finally {
      await dataSource.destroy();
      await db.drop();
    }
  });
});
