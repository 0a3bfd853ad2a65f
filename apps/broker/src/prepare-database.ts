import { DataSource } from 'typeorm';
import { brokerDataSourceOptions, runMigrations } from '@app/database';
import { ENTITIES } from './entities';

/** Brings the database to the latest schema before the app starts serving. */
export async function prepareDatabase(url: string): Promise<string[]> {
  const dataSource = new DataSource({
    ...brokerDataSourceOptions({ url, entities: ENTITIES, poolSize: 2, applicationName: 'session-broker-migrate' }),
  });
  await dataSource.initialize();
  try {
    return await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}
