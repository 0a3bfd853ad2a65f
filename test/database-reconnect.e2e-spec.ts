/**
 * What a database failover does to one broker, without the cluster (that is test/database-failover.e2e-spec.ts):
 * every connection it holds is cut at once (pg_terminate_backend on each), and for a moment the server it
 * reaches takes no writes (a standby finishing its promotion, here a database made read-only). Without a
 * restart the broker drops and replaces its pooled connections and its LISTEN connection, says 503 (never
 * 500) while it cannot write, and /metrics and /health/ready show each (docs/operations.md#past-one-database-server).
 */
import { Client } from 'pg';
import request from 'supertest';
import { AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { scrapeMetrics } from './support/metrics-scrape';
import { eventually } from './support/processes';

const POOL_SIZE = 4;

const scrape = (broker: BrokerHarness): Promise<Map<string, number>> => scrapeMetrics(broker.url);

describe('a broker whose database connections are all cut at once', () => {
  let broker: BrokerHarness;
  let admin: Client;

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV, DATABASE_POOL_SIZE: String(POOL_SIZE), SESSION_SWEEP_INTERVAL_MS: '3600000' });
    admin = new Client({ connectionString: broker.db.url.replace(/\/[^/]+$/, '/postgres') });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await broker?.close();
  });

  const brokerBackends = async (): Promise<number[]> =>
    (
      await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        broker.db.name,
      ])
    ).rows.map((r) => r.pid);
  const cutEverything = () =>
    admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [broker.db.name]);

  it('replaces every pooled connection and its LISTEN connection, and creates go on', async () => {
    const before = await scrape(broker);
    expect(before.get('broker_db_listen_connected')).toBe(1);
    await createSession(broker.url, sessionBody(freshPair())).expect(201);
    const old = await brokerBackends();
    expect(old.length).toBeGreaterThanOrEqual(POOL_SIZE + 1);

    await cutEverything();
    await eventually(async () => {
      const now = await scrape(broker);
      const moved = (key: string) => (now.get(key) ?? 0) - (before.get(key) ?? 0);
      // An idle connection's loss is counted by the pool; one a periodic job (the pool-usage refresh, the breaker
      // lease) had checked out at the cut fails that job's statement instead and is dropped on release, uncounted.
      return moved('broker_db_pool_connections_lost_total') >= 1 && moved('broker_db_listen_reconnects_total') >= 1;
    });
    expect((await scrape(broker)).get('broker_db_listen_connected')).toBe(1);

    for (let i = 0; i < 3; i++) await createSession(broker.url, sessionBody(freshPair())).expect(201);
    await request(broker.url).get('/health/ready').expect(200);
    // No connection of before is still in use: each one the broker holds now was opened after the cut.
    expect((await brokerBackends()).filter((pid) => old.includes(pid))).toEqual([]);
  });

  it('says 503, not 500, and not ready, while the server it reaches takes no writes; then recovers by itself', async () => {
    try {
      await admin.query(`ALTER DATABASE ${broker.db.name} SET default_transaction_read_only = on`);
      await cutEverything();
      await eventually(async () => (await request(broker.url).get('/health/ready')).status === 503);
      const ready = await request(broker.url).get('/health/ready');
      expect(ready.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(ready.body).toMatchObject({ status: 503, detail: 'Not ready: database down.' });
      expect(ready.body.checks.database.message).toBe('the server reached takes no writes (read-only)');

      const refused = await createSession(broker.url, sessionBody(freshPair()));
      expect(refused.status).toBe(503);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.body.type).toMatch(/\/problems\/database-unavailable$/);
    } finally {
      await admin.query(`ALTER DATABASE ${broker.db.name} RESET default_transaction_read_only`);
    }
    await cutEverything();
    await eventually(async () => (await request(broker.url).get('/health/ready')).status === 200);
    await createSession(broker.url, sessionBody(freshPair())).expect(201);
  });
});
