/**
 * The replica's one LISTEN connection on a real PostgreSQL: several channels over one connection, and
 * after the server drops it (pg_terminate_backend) it is made again, listens to every channel again
 * and tells its subscribers so they can re-read what they missed.
 */
import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { eventually } from '../../../../test/support/processes';
import { ListenClient } from './listen-client';

describe('ListenClient', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: [], poolSize: 2 })).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  const listeners = async (): Promise<number> =>
    (
      (await dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'listen-spec'`)) as Array<{
        n: number;
      }>
    )[0].n;

  it('carries several channels on one connection and comes back after losing it', async () => {
    const client = new ListenClient(db.url, { reconnectMs: 50, applicationName: 'listen-spec' });
    const got: string[] = [];
    let reconnects = 0;
    client.subscribe('spec_one', (payload) => got.push(`one:${payload}`));
    client.subscribe('spec_two', (payload) => got.push(`two:${payload}`));
    client.onReconnect(() => (reconnects += 1));
    await client.start();
    try {
      await eventually(async () => client.connected, 100, 20);
      expect(await listeners()).toBe(1);
      await dataSource.query(`SELECT pg_notify('spec_one', 'a'), pg_notify('spec_two', 'b')`);
      await eventually(async () => got.length === 2, 100, 20);

      await dataSource.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'listen-spec'`);
      await eventually(async () => reconnects >= 1 && client.connected, 200, 20);
      expect(await listeners()).toBe(1);
      await dataSource.query(`SELECT pg_notify('spec_one', 'c'), pg_notify('spec_two', 'd')`);
      await eventually(async () => got.length === 4, 100, 20);
      expect(got.sort()).toEqual(['one:a', 'one:c', 'two:b', 'two:d']);
    } finally {
      await client.stop();
    }
    await eventually(async () => (await listeners()) === 0, 100, 20);
  });
});
