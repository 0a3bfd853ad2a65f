/**
 * `recordWithChange`: the change and its event in one statement, against a real PostgreSQL. The event
 * and its delivery exist exactly when the change changed a row; a failing statement leaves neither.
 */
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase, ManualClock } from '@app/testing';
import { ENTITIES } from '../../database/entities';
import { EventOutbox } from './event-outbox';

const T0 = Date.UTC(2026, 6, 15, 12, 0, 0);

describe('EventOutbox.recordWithChange', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let outbox: EventOutbox;
  let accountId: string;
  let bareAccountId: string;

  const events = async (sessionId: string) =>
    (await dataSource.query('SELECT count(*)::int AS n FROM webhook_events WHERE session_id = $1', [sessionId]))[0].n as number;
  const deliveries = async (sessionId: string) =>
    (
      await dataSource.query(
        'SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.session_id = $1',
        [sessionId],
      )
    )[0].n as number;

  const probeRow = async () => {
    const id = randomUUID();
    await dataSource.query(`INSERT INTO outbox_probe (id, done) VALUES ($1, false)`, [id]);
    return id;
  };

  const gate = (id: string) => ({ sql: `UPDATE outbox_probe SET done = true WHERE id = $1 AND NOT done RETURNING id`, params: [id] });

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    // A table of its own, so the test needs no session, number or provider.
    await dataSource.query('CREATE TABLE outbox_probe (id uuid PRIMARY KEY, done boolean NOT NULL)');
    [{ id: accountId }] = await dataSource.query(
      `INSERT INTO accounts (name, default_callback_url) VALUES ('with-url', 'http://127.0.0.1:9/hook') RETURNING id`,
    );
    [{ id: bareAccountId }] = await dataSource.query(
      `INSERT INTO accounts (name, default_callback_url) VALUES ('bare', NULL) RETURNING id`,
    );
    outbox = new EventOutbox(new ManualClock(T0), { giveUpAfterMs: 72 * 3600_000 });
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  const event = (account: string, sessionId: string) => ({
    type: 'session.created' as const,
    accountId: account,
    sessionId,
    callbackUrl: null,
    data: { session: { id: sessionId } },
  });

  it('records the event and its delivery when the change changed a row', async () => {
    const id = await probeRow();
    const recorded = await outbox.recordWithChange(dataSource, gate(id), event(accountId, id));
    expect(recorded).not.toBeNull();
    expect(recorded!.deliveryId).not.toBeNull();
    expect(await events(id)).toBe(1);
    expect(await deliveries(id)).toBe(1);
    expect((await dataSource.query('SELECT done FROM outbox_probe WHERE id = $1', [id]))[0].done).toBe(true);
  });

  it('records nothing when the change changed nothing', async () => {
    const id = await probeRow();
    await outbox.recordWithChange(dataSource, gate(id), event(accountId, id));
    // Second time the gate matches no row.
    expect(await outbox.recordWithChange(dataSource, gate(id), event(accountId, id))).toBeNull();
    expect(await events(id)).toBe(1);
  });

  it('stores the event without a delivery when there is nowhere to deliver it', async () => {
    const id = await probeRow();
    const recorded = await outbox.recordWithChange(dataSource, gate(id), event(bareAccountId, id));
    expect(recorded).toEqual({ eventId: expect.any(String), deliveryId: null });
    expect(await events(id)).toBe(1);
    expect(await deliveries(id)).toBe(0);
  });

  it('keeps neither the change nor the event when the statement fails', async () => {
    const id = await probeRow();
    // An account that does not exist: the event's foreign key, or the delivery, fails the whole statement.
    const failing = { ...event(randomUUID(), id), callbackUrl: 'http://127.0.0.1:9/hook' };
    const attempt = outbox.recordWithChange(dataSource, gate(id), failing);
    await expect(attempt).rejects.toThrow();
    expect((await dataSource.query('SELECT done FROM outbox_probe WHERE id = $1', [id]))[0].done).toBe(false);
    expect(await events(id)).toBe(0);
  });
});
