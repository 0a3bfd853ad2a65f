import { DataSource } from 'typeorm';
import { brokerDataSourceOptions, pendingSchemaChanges } from '@app/database';
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
