import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { IDEMPOTENCY_CHANNEL, IdempotencyRepository, keyTopic } from './idempotency.repository';

const ACCOUNT = '00000000-0000-0000-0000-0000000000c1';
const SENTINEL = 'idempotency_spec_sentinel';
const HOUR = 3_600_000;

// Issue #19: a statement that calls pg_notify takes PostgreSQL's database-wide NOTIFY lock at its commit and holds
// it through the WAL flush, so such commits run one at a time. Keeping or letting go of an Idempotency-Key's record
// (every SDK create has a key) commits first, and its NOTIFY follows as a statement of its own.
describe('IdempotencyRepository: the settled key is notified after its write commits', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let records: IdempotencyRepository;
  let listener: Client;
  let other: Client;
  let sentinels = 0;
  /** The key the current test settles. */
  let lastKey = '';
  /** What the listener heard, each with what another connection saw of `lastKey`'s record the moment it arrived. */
  let heard: Array<{ topic: string; seen: Promise<unknown> }> = [];
  const warnings: string[] = [];

  /** The record as a connection that sees only what has committed sees it. */
  const committed = async (key: string) =>
    (await other.query('SELECT response_status, response_body FROM idempotency_records WHERE account_id = $1 AND key = $2', [ACCOUNT, key]))
      .rows[0] ?? null;

  /** Resolves once every notification committed before this call has reached the listener (they arrive in commit order). */
  async function caughtUp(): Promise<void> {
    const want = sentinels + 1;
    await other.query(`SELECT pg_notify('${SENTINEL}', $1)`, [String(want)]);
    for (let i = 0; i < 200 && sentinels < want; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sentinels).toBe(want);
  }

  /** Statements the data source runs from now on. */
  function statements(): string[] {
    const seen: string[] = [];
    dataSource.subscribers.push({ afterQuery: (e: { query: string }) => seen.push(String(e.query)) } as never);
    return seen;
  }

  /** A fresh key claimed at `at`, as IdempotencyService claims one. */
  async function claimed(at: Date): Promise<string> {
    const key = `k-${randomUUID()}`;
    expect(await records.claim(ACCOUNT, key, 'hash', at, new Date(at.getTime() + 24 * HOUR))).toBe(true);
    return key;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'a')`, [ACCOUNT]);
    records = new IdempotencyRepository(dataSource);
    records.warn = (message) => warnings.push(message);
    other = new Client({ connectionString: db.url });
    await other.connect();
    listener = new Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (n) => {
      if (n.channel === SENTINEL) sentinels += 1;
      // Looked at the moment the notification arrives, before anything else runs.
      else heard.push({ topic: n.payload ?? '', seen: committed(lastKey) });
    });
    await listener.query(`LISTEN ${IDEMPOTENCY_CHANNEL}`);
    await listener.query(`LISTEN ${SENTINEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await other?.end();
    await dataSource?.destroy();
    await db?.drop();
  });
  beforeEach(() => {
    heard = [];
    warnings.length = 0;
  });

  it('keeps the answer, committed before the NOTIFY is sent as a statement of its own', async () => {
    const at = new Date('2026-12-01T12:00:00Z');
    const key = (lastKey = await claimed(at));
    const seen = statements();
    expect(await records.store(ACCOUNT, key, at, 201, '{"id":"s"}')).toBe(true);
    await caughtUp();
    expect(heard.map((h) => h.topic)).toEqual([keyTopic(ACCOUNT, key)]);
    expect(await heard[0].seen).toEqual({ response_status: 201, response_body: '{"id":"s"}' });
    // The write is one autocommit statement without pg_notify; the NOTIFY is the next statement.
    const write = seen.findIndex((q) => q.includes('idempotency.store'));
    expect(seen[write]).not.toMatch(/pg_notify/i);
    expect(seen[write + 1]).toMatch(/idempotency\.settled \*\/ SELECT pg_notify/);
    expect(seen).toHaveLength(write + 2);
    expect(warnings).toEqual([]);
  });

  it('lets go of the claim, deleted before the NOTIFY is sent as a statement of its own', async () => {
    const at = new Date('2026-12-01T12:00:01Z');
    const key = (lastKey = await claimed(at));
    const seen = statements();
    await records.release(ACCOUNT, key, at);
    await caughtUp();
    expect(heard.map((h) => h.topic)).toEqual([keyTopic(ACCOUNT, key)]);
    expect(await heard[0].seen).toBeNull();
    const write = seen.findIndex((q) => q.includes('idempotency.release'));
    expect(seen[write]).not.toMatch(/pg_notify/i);
    expect(seen[write + 1]).toMatch(/idempotency\.settled \*\/ SELECT pg_notify/);
    expect(warnings).toEqual([]);
  });

  it('notifies nobody when the claim no longer held (taken over, answered already, or gone)', async () => {
    const at = new Date('2026-12-01T12:00:02Z');
    const key = (lastKey = await claimed(at));
    const seen = statements();
    // Another claim time: the claim was taken over.
    expect(await records.store(ACCOUNT, key, new Date(at.getTime() - 1), 201, '{}')).toBe(false);
    await records.release(ACCOUNT, key, new Date(at.getTime() - 1));
    // Answered once: a second answer is not kept, and not announced again.
    expect(await records.store(ACCOUNT, key, at, 422, '{"a":1}')).toBe(true);
    await caughtUp();
    expect(heard).toHaveLength(1);
    heard = [];
    expect(await records.store(ACCOUNT, key, at, 201, '{"b":2}')).toBe(false);
    await records.release(ACCOUNT, key, at);
    // A key never claimed.
    expect(await records.store(ACCOUNT, 'never-claimed', at, 201, '{}')).toBe(false);
    await caughtUp();
    expect(heard).toEqual([]);
    expect(seen.filter((q) => /pg_notify/i.test(q))).toHaveLength(1);
    expect(await committed(key)).toEqual({ response_status: 422, response_body: '{"a":1}' });
  });

  it('keeps the answer when its NOTIFY fails, and tells it in a warning', async () => {
    // A role that may write the records but not call pg_notify (in this test's own database only).
    const role = `idem_spec_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    await dataSource.query(`CREATE ROLE ${role}`);
    await dataSource.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_records TO ${role}`);
    await dataSource.query('REVOKE EXECUTE ON FUNCTION pg_notify(text, text) FROM PUBLIC');
    const url = new URL(db.url);
    url.searchParams.set('options', `-c role=${role}`);
    const limited = await new DataSource(brokerDataSourceOptions({ url: url.toString(), entities: ENTITIES, poolSize: 1 })).initialize();
    try {
      const denied = new IdempotencyRepository(limited);
      denied.warn = (message) => warnings.push(message);
      const at = new Date('2026-12-01T12:00:03Z');
      const key = (lastKey = await claimed(at));
      expect(await denied.store(ACCOUNT, key, at, 201, '{"kept":true}')).toBe(true);
      expect(await committed(key)).toEqual({ response_status: 201, response_body: '{"kept":true}' });
      const gone = await claimed(at);
      await denied.release(ACCOUNT, gone, at);
      expect(await committed(gone)).toBeNull();
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatch(new RegExp(`could not notify ${IDEMPOTENCY_CHANNEL}.*permission denied`));
      await caughtUp();
      expect(heard).toEqual([]);
    } finally {
      await limited.destroy();
      await dataSource.query('GRANT EXECUTE ON FUNCTION pg_notify(text, text) TO PUBLIC');
      await dataSource.query(`REVOKE ALL ON idempotency_records FROM ${role}`);
      await dataSource.query(`DROP ROLE ${role}`);
    }
  });
});
