import { DataSource } from 'typeorm';
import { MIGRATIONS, brokerDataSourceOptions, pendingSchemaChanges, runMigrations } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';

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

  // TypeORM's own diff compares an index's name, uniqueness and column set: a migration that wrote the pool
  // rule's index without `WHERE "active"` (one participant per proxy number for ever), or another condition,
  // or the columns in another order, passed it.
  describe('an index whose name is there but whose declaration is not', () => {
    const POOL_RULE = `CREATE UNIQUE INDEX "uq_active_participant_per_proxy" ON "session_participants" ("proxy_number_id", "number") WHERE "active"`;
    const replaceIndex = async (name: string, create: string) => {
      await dataSource.query(`DROP INDEX "public"."${name}"`);
      await dataSource.query(create);
    };
    afterEach(async () => {
      await replaceIndex('uq_active_participant_per_proxy', POOL_RULE);
      await replaceIndex(
        'idx_participant_history',
        `CREATE INDEX "idx_participant_history" ON "session_participants" ("account_id", "number", "created_at")`,
      );
      await replaceIndex(
        'idx_interactions_due',
        `CREATE INDEX "idx_interactions_due" ON "interactions" ("next_attempt_at") WHERE "status" = 'pending'`,
      );
      expect((await pendingSchemaChanges(dataSource)).up).toEqual([]);
    });

    it.each([
      [
        'without its WHERE',
        `CREATE UNIQUE INDEX "uq_active_participant_per_proxy" ON "session_participants" ("proxy_number_id", "number")`,
      ],
      [
        'with another WHERE',
        `CREATE UNIQUE INDEX "uq_active_participant_per_proxy" ON "session_participants" ("proxy_number_id", "number") WHERE NOT "active"`,
      ],
    ])('the pool rule %s is drift, and the SQL given puts it back', async (_case, drifted) => {
      await replaceIndex('uq_active_participant_per_proxy', drifted);
      const { up, down } = await pendingSchemaChanges(dataSource);
      expect(up).toEqual([`DROP INDEX "public"."uq_active_participant_per_proxy"`, POOL_RULE]);
      // The way back is the index as the database has it now.
      expect(down[0]).toMatch(
        /^CREATE UNIQUE INDEX uq_active_participant_per_proxy ON public\.session_participants USING btree \(proxy_number_id, number\)/,
      );
      for (const statement of up) await dataSource.query(statement);
      expect((await pendingSchemaChanges(dataSource)).up).toEqual([]);
    });

    it('the same columns in another order are drift', async () => {
      await replaceIndex(
        'idx_participant_history',
        `CREATE INDEX "idx_participant_history" ON "session_participants" ("number", "account_id", "created_at")`,
      );
      expect((await pendingSchemaChanges(dataSource)).up).toEqual([
        `DROP INDEX "public"."idx_participant_history"`,
        `CREATE INDEX "idx_participant_history" ON "session_participants" ("account_id", "number", "created_at")`,
      ]);
    });

    it('one condition written another way is not: PostgreSQL prints both sides', async () => {
      await replaceIndex(
        'uq_active_participant_per_proxy',
        `CREATE UNIQUE INDEX uq_active_participant_per_proxy ON public.session_participants USING btree (proxy_number_id, number) WHERE (active)`,
      );
      await replaceIndex(
        'idx_interactions_due',
        `CREATE INDEX idx_interactions_due ON interactions (next_attempt_at) WHERE (status = 'pending'::text)`,
      );
      expect((await pendingSchemaChanges(dataSource)).up).toEqual([]);
    });
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
