/**
 * The replica's one LISTEN connection on a real PostgreSQL: several channels over one connection, and
 * after the server drops it (pg_terminate_backend) it is made again, listens to every channel again
 * and tells its subscribers so they can re-read what they missed. A connection that goes silent (its
 * server's host gone without closing it: a TCP proxy that stops carrying bytes) is found by its
 * heartbeat and replaced; one that answers its heartbeats is kept.
 */
import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { eventually } from '../../../../test/support/processes';
import { startTcpProxy } from '../../../../test/support/tcp-proxy';
import { ListenClient } from './listen-client';

const FAST = { firstMs: 50, maxMs: 50, jitter: 0 };

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

  const backends = async (name: string): Promise<number[]> =>
    (
      (await dataSource.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY backend_start`, [name])) as Array<{
        pid: number;
      }>
    ).map((r) => r.pid);

  it('carries several channels on one connection and comes back after losing it', async () => {
    const client = new ListenClient(db.url, { reconnect: FAST, applicationName: 'listen-spec' });
    const got: string[] = [];
    let reconnects = 0;
    client.subscribe('spec_one', (payload) => got.push(`one:${payload}`));
    client.subscribe('spec_two', (payload) => got.push(`two:${payload}`));
    client.onReconnect(() => (reconnects += 1));
    await client.start();
    try {
      await eventually(async () => client.connected, 100, 20);
      expect(await backends('listen-spec')).toHaveLength(1);
      await dataSource.query(`SELECT pg_notify('spec_one', 'a'), pg_notify('spec_two', 'b')`);
      await eventually(async () => got.length === 2, 100, 20);

      await dataSource.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'listen-spec'`);
      await eventually(async () => reconnects >= 1 && client.connected, 200, 20);
      expect(await backends('listen-spec')).toHaveLength(1);
      await dataSource.query(`SELECT pg_notify('spec_one', 'c'), pg_notify('spec_two', 'd')`);
      await eventually(async () => got.length === 4, 100, 20);
      expect(got.sort()).toEqual(['one:a', 'one:c', 'two:b', 'two:d']);
    } finally {
      await client.stop();
    }
    await eventually(async () => (await backends('listen-spec')).length === 0, 100, 20);
  });

  describe('heartbeat', () => {
    const target = () => new URL(db.url);

    it('replaces a connection that stops answering, and listens again on the new one', async () => {
      const proxy = await startTcpProxy(target().hostname, Number(target().port));
      const viaProxy = target();
      viaProxy.port = String(proxy.port);
      const client = new ListenClient(viaProxy.toString(), {
        reconnect: FAST,
        heartbeatMs: 50,
        heartbeatTimeoutMs: 300,
        applicationName: 'listen-spec-silent',
      });
      const got: string[] = [];
      let reconnects = 0;
      client.subscribe('spec_silent', (payload) => got.push(payload));
      client.onReconnect(() => (reconnects += 1));
      await client.start();
      try {
        await eventually(async () => client.connected, 100, 20);
        const [first] = await backends('listen-spec-silent');

        proxy.silence();
        await eventually(async () => reconnects >= 1 && client.connected, 200, 20);
        const now = await backends('listen-spec-silent');
        expect(now).toContain(first); // the silent one is still open on the server: nothing told it
        expect(now.length).toBeGreaterThanOrEqual(2);
        await dataSource.query(`SELECT pg_notify('spec_silent', 'after')`);
        await eventually(async () => got.includes('after'), 100, 20);
      } finally {
        await client.stop();
        await proxy.close();
      }
    });

    it('keeps a connection that answers its heartbeats', async () => {
      const client = new ListenClient(db.url, {
        reconnect: FAST,
        heartbeatMs: 20,
        heartbeatTimeoutMs: 2000,
        applicationName: 'listen-spec-live',
      });
      let reconnects = 0;
      client.subscribe('spec_live', () => undefined);
      client.onReconnect(() => (reconnects += 1));
      await client.start();
      try {
        await eventually(async () => client.connected, 100, 20);
        const [pid] = await backends('listen-spec-live');
        // Many heartbeats later (each a SELECT 1 the server answers, moving its backend's state_change), the same backend, no reconnect.
        const seen = new Set<string>();
        await eventually(
          async () => {
            const rows = (await dataSource.query(`SELECT query, state_change::text AS at FROM pg_stat_activity WHERE pid = $1`, [
              pid,
            ])) as Array<{
              query: string;
              at: string;
            }>;
            if (rows[0]?.query === 'SELECT 1') seen.add(rows[0].at);
            return seen.size >= 5;
          },
          400,
          10,
        );
        expect(await backends('listen-spec-live')).toEqual([pid]);
        expect(reconnects).toBe(0);
        expect(client.connected).toBe(true);
      } finally {
        await client.stop();
      }
    });
  });
});
