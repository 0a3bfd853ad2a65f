import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions, PoolStatements } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../../entities';
import { PostgresInteractionRepository } from '../../relay/interaction.repository';
import { PostgresSessionRepository } from '../../sessions/session.repository';
import { DELIVERY_CHANNEL } from '../delivery/delivery-store';
import { DeliveryWakes, transactionThenWake } from './delivery-wakes';
import { EventOutbox, type SessionEventInput } from './event-outbox';

const ACCOUNT = '00000000-0000-0000-0000-0000000000a1';
const BARE_ACCOUNT = '00000000-0000-0000-0000-0000000000b2';
const SESSION = '6f1d2c3b-4a59-4867-9f8e-7d6c5b4a3921';
const SENTINEL = 'outbox_spec_sentinel';

function event(callbackUrl: string | null, accountId = ACCOUNT): SessionEventInput {
  return { type: 'session.closed', accountId, sessionId: SESSION, callbackUrl, data: { sessionId: SESSION } };
}

// Issue #19: a transaction that calls pg_notify takes PostgreSQL's database-wide NOTIFY lock at its commit and holds
// it through the WAL flush, so such commits run one at a time. The outbox's writes wake the delivery workers after
// their transaction has committed instead, one NOTIFY per distinct URL.
describe('EventOutbox: the delivery workers are woken after the commit', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let listener: Client;
  let other: Client;
  const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000, opsWebhookUrl: 'https://ops.example/hooks/ops' });
  let heard: string[] = [];
  let sentinels = 0;
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);

  /** Statements the data source runs from now on, COMMIT and ROLLBACK included. */
  function statements(): string[] {
    const seen: string[] = [];
    dataSource.subscribers.push({ afterQuery: (e: { query: string }) => seen.push(String(e.query)) } as never);
    return seen;
  }

  /** Resolves once every notification committed before this call has reached the listener (they arrive in commit order). */
  async function caughtUp(): Promise<void> {
    const want = sentinels + 1;
    await other.query(`SELECT pg_notify('${SENTINEL}', $1)`, [String(want)]);
    for (let i = 0; i < 200 && sentinels < want; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sentinels).toBe(want);
  }

  const deliveries = async (url: string) =>
    ((await dataSource.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE url = $1', [url])) as Array<{ n: number }>)[0].n;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 3 })).initialize();
    await dataSource.query(
      `INSERT INTO accounts (id, name, default_callback_url) VALUES ($1, 'a', 'https://a.example/hook'), ($2, 'b', NULL)`,
      [ACCOUNT, BARE_ACCOUNT],
    );
    listener = new Client({ connectionString: db.url });
    other = new Client({ connectionString: db.url });
    await Promise.all([listener.connect(), other.connect()]);
    listener.on('notification', (n) => {
      if (n.channel === SENTINEL) sentinels += 1;
      else heard.push(`${n.channel} ${n.payload}`);
    });
    await listener.query(`LISTEN ${DELIVERY_CHANNEL}`);
    await listener.query(`LISTEN ${SENTINEL}`);
  });
  beforeEach(() => {
    heard = [];
    warnings.length = 0;
    dataSource.subscribers.length = 0;
  });
  afterAll(async () => {
    await listener?.end();
    await other?.end();
    await dataSource?.destroy();
    await db?.drop();
  });

  it('records with no NOTIFY in the transaction, then wakes the workers once per distinct URL after the commit', async () => {
    const seen = statements();
    const recorded = await transactionThenWake(dataSource, warn, async (manager, wakes) => {
      const first = await outbox.record(manager, event('https://one.example/hook'), wakes);
      await outbox.record(manager, event('https://one.example/hook'), wakes);
      await outbox.record(manager, event(null), wakes); // the account's default
      const nowhere = await outbox.record(manager, event(null, BARE_ACCOUNT), wakes);
      expect(nowhere).toMatchObject({ deliveryId: null, url: null });
      // Nobody has heard of them before the commit.
      await caughtUp();
      expect(heard).toEqual([]);
      return first;
    });
    expect(recorded).toMatchObject({ url: 'https://one.example/hook', deliveryId: expect.any(String) });
    expect(await deliveries('https://one.example/hook')).toBe(2);

    // Nothing inside the transaction called pg_notify; one statement after its COMMIT did.
    const commit = seen.indexOf('COMMIT');
    expect(commit).toBeGreaterThan(0);
    expect(seen.slice(0, commit).filter((q) => /pg_notify/i.test(q))).toEqual([]);
    expect(seen.slice(commit + 1).filter((q) => /pg_notify/i.test(q))).toHaveLength(1);

    await caughtUp();
    expect(heard.sort()).toEqual([`${DELIVERY_CHANNEL} https://a.example/hook`, `${DELIVERY_CHANNEL} https://one.example/hook`]);
    expect(warnings).toEqual([]);
  });

  it('notifies nobody and keeps nothing when the transaction rolls back', async () => {
    const seen = statements();
    await expect(
      transactionThenWake(dataSource, warn, async (manager, wakes) => {
        await outbox.record(manager, event('https://rolled-back.example/hook'), wakes);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(seen).toContain('ROLLBACK');
    expect(seen.filter((q) => /pg_notify/i.test(q))).toEqual([]);
    expect(await deliveries('https://rolled-back.example/hook')).toBe(0);
    await caughtUp();
    expect(heard).toEqual([]);
  });

  it('wakes after the commit of a session transaction (close, expiry) and of a relay transaction', async () => {
    const sessions = new PostgresSessionRepository(dataSource, outbox, new PoolStatements(dataSource));
    const seen = statements();
    await sessions.transaction(async (tx) => {
      await tx.record(event('https://closed.example/hook'));
      await caughtUp();
      expect(heard).toEqual([]);
    });
    await caughtUp();
    expect(heard).toEqual([`${DELIVERY_CHANNEL} https://closed.example/hook`]);

    heard = [];
    const interactions = new PostgresInteractionRepository(dataSource, outbox);
    await interactions.transaction(async (tx) => {
      await tx.record({ ...event('https://relayed.example/hook'), type: 'message.relayed' });
      await tx.record({ ...event('https://relayed.example/hook'), type: 'message.failed' });
      await caughtUp();
      expect(heard).toEqual([]);
    });
    await caughtUp();
    expect(heard).toEqual([`${DELIVERY_CHANNEL} https://relayed.example/hook`]);

    const commits = seen.flatMap((q, i) => (q === 'COMMIT' ? [i] : []));
    expect(commits).toHaveLength(2);
    expect(seen.slice(0, commits[0]).filter((q) => /pg_notify/i.test(q))).toEqual([]);
    expect(seen.slice(commits[0] + 2, commits[1]).filter((q) => /pg_notify/i.test(q))).toEqual([]);
  });

  it('records an ops event with its URL for the caller to wake, and nothing without OPS_WEBHOOK_URL', async () => {
    await transactionThenWake(dataSource, warn, async (manager, wakes) => {
      const ops = await outbox.recordOps(manager, { type: 'provider.state_changed', data: { provider: 'p' } }, wakes);
      expect(ops).toMatchObject({ url: 'https://ops.example/hooks/ops' });
      const none = await new EventOutbox(systemClock, { giveUpAfterMs: 1 }).recordOps(
        manager,
        { type: 'provider.state_changed', data: {} },
        wakes,
      );
      expect(none).toBeNull();
    });
    await caughtUp();
    expect(heard).toEqual([`${DELIVERY_CHANNEL} https://ops.example/hooks/ops`]);
  });

  it('logs a wake that failed with the URL’s host only; the delivery stays committed for the poll', async () => {
    const closed = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 1 })).initialize();
    await closed.destroy();
    const wakes = new DeliveryWakes();
    wakes.add('https://user:secret@hooks.example:8443/path?token=abc');
    await wakes.send(closed, warn);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/hooks\.example:8443/);
    expect(warnings[0]).not.toMatch(/secret|token|path|user/);

    warnings.length = 0;
    const two = new DeliveryWakes();
    two.add('https://a.example/x?token=1');
    two.add('https://b.example/y?token=2');
    await two.send(closed, warn);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/a\.example.*b\.example/);
    expect(warnings[0]).not.toMatch(/token/);

    // Nothing to wake: no statement, no warning.
    warnings.length = 0;
    await new DeliveryWakes().send(closed, warn);
    expect(warnings).toEqual([]);
  });
});
