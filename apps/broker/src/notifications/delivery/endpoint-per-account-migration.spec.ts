import { DataSource } from 'typeorm';
import { brokerDataSourceOptions, runMigrations } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../../entities';

const A = '00000000-0000-0000-0000-00000000000a';
const B = '00000000-0000-0000-0000-00000000000b';
const SHARED = 'https://hooks.example.com/a';
const OPS = 'https://ops.example.com/hook';
const FORGOTTEN = 'https://old.example.com/gone';
const DOWN = { version: 1, state: 'OPEN', since: 1, openedAt: 1, retryAt: 300_001 };

// Endpoint state was one row per URL; WebhookEndpointPerAccount makes it one per (account, URL). What a URL's
// row said goes on for every account with deliveries to it, and for the operator where OPS_WEBHOOK_URL uses it.
describe('migration WebhookEndpointPerAccount', () => {
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

  it("copies each URL's state to every account delivering there, keeps the operator's, drops the unused", async () => {
    const ran = async () =>
      (await dataSource.query(`SELECT 1 FROM migrations WHERE name = 'WebhookEndpointPerAccount1796130000000'`)).length > 0;
    while (await ran()) await dataSource.undoLastMigration({ transaction: 'all' });
    for (const id of [A, B]) await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'x')`, [id]);
    const deliveries: Array<[account: string | null, url: string]> = [
      [A, SHARED],
      [A, SHARED],
      [B, SHARED],
      [null, OPS],
    ];
    for (const [i, [account, url]] of deliveries.entries()) {
      const event = `10000000-0000-0000-0000-00000000000${i}`;
      await dataSource.query(`INSERT INTO webhook_events (id, account_id, type, data, created_at) VALUES ($1, $2, 'x', '{}', now())`, [
        event,
        account,
      ]);
      await dataSource.query(
        `INSERT INTO webhook_deliveries (id, event_id, account_id, kind, url, status, next_attempt_at, expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'pending', now(), now() + interval '1 day', now(), now())`,
        [`20000000-0000-0000-0000-00000000000${i}`, event, account, account ? 'account' : 'ops', url],
      );
    }
    for (const url of [SHARED, OPS, FORGOTTEN])
      await dataSource.query(
        `INSERT INTO webhook_endpoints (url, blocked_until, down_breaker, last_error, updated_at)
         VALUES ($1, to_timestamp(300.001), $2, 'HTTP 401', now())`,
        [url, JSON.stringify(DOWN)],
      );

    await runMigrations(dataSource);

    const rows: Array<{ account_id: string | null; url: string; state: string; last_error: string; blocked_until: Date }> =
      await dataSource.query(
        `SELECT account_id, url, down_breaker->>'state' AS state, last_error, blocked_until FROM webhook_endpoints
          ORDER BY url, account_id NULLS FIRST`,
      );
    const kept = { state: 'OPEN', last_error: 'HTTP 401', blocked_until: new Date(300_001) };
    expect(rows).toEqual([
      { account_id: A, url: SHARED, ...kept },
      { account_id: B, url: SHARED, ...kept },
      { account_id: null, url: OPS, ...kept },
    ]);
    // One endpoint per (account, URL), and one per URL for the operator.
    await expect(
      dataSource.query(`INSERT INTO webhook_endpoints (account_id, url, updated_at) VALUES ($1, $2, now())`, [A, SHARED]),
    ).rejects.toThrow(/uq_webhook_endpoints_url_account/);
    await expect(dataSource.query(`INSERT INTO webhook_endpoints (url, updated_at) VALUES ($1, now())`, [OPS])).rejects.toThrow(
      /uq_webhook_endpoints_ops_url/,
    );
  });
});
