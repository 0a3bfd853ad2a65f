/**
 * Deliveries are durable: the built broker (`dist/apps/broker/src/main.js`, as `npm start` runs it) is
 * killed with SIGKILL while webhooks are in flight, more events are recorded while it is down, and after
 * a restart every event reaches the receiver at least once.
 */
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase, WebhookReceiver, type Answer } from '@app/testing';
import { ENTITIES } from '../apps/broker/src/entities';
import { EventOutbox, transactionThenWake } from '../apps/broker/src/notifications';
import { buildOnce, eventually, freePort, startProcess, type RunningProcess } from './support/processes';
import { TEST_WEBHOOK_SECRET } from './support/broker-harness';

const MAIN = 'dist/apps/broker/src/main.js';

describe('webhook delivery across a crash', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let receiver: WebhookReceiver;
  let running: RunningProcess | undefined;

  beforeAll(() => buildOnce(), 240_000);
  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 4 })).initialize();
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    if (running && running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
    await receiver.close();
    await dataSource.destroy();
    await db.drop();
  });

  async function ready(port: number): Promise<boolean> {
    return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200;
  }

  it('kill -9 with deliveries in flight, then a restart: every event arrives at least once', async () => {
    const port = await freePort();
    const env = {
      DATABASE_URL: db.url,
      PORT: String(port),
      PROVIDERS: `primary=sim:http://127.0.0.1:${await freePort()}`,
      SIM_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      // Shortened so the restarted broker takes the dead one's endpoint over quickly.
      WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000',
      WEBHOOK_LEASE_MS: '3000',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_RETRY_MAX_MS: '200',
      WEBHOOK_DOWN_RETRY_INTERVAL_MS: '200',
      WEBHOOK_BREAKER_RESET_MS: '200',
      WEBHOOK_BREAKER_MAX_RESET_MS: '400',
    };
    const [{ id: accountId }] = (await dataSource.query('INSERT INTO accounts (name, default_callback_url) VALUES ($1, $2) RETURNING id', [
      'durable',
      receiver.url,
    ])) as Array<{ id: string }>;
    const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 72 * 3600_000 });
    const recordEvents = async (count: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const { eventId } = await transactionThenWake(
          dataSource,
          (message) => {
            throw new Error(message);
          },
          (manager, wakes) =>
            outbox.record(
              manager,
              { type: 'session.created', accountId, sessionId: '6f1d2c3b-4a59-4867-9f8e-7d6c5b4a3921', callbackUrl: null, data: { i } },
              wakes,
            ),
        );
        ids.push(eventId);
      }
      return ids;
    };

    // The receiver holds every request: the broker has deliveries in flight when it dies.
    receiver.answer = () => new Promise<Answer>(() => undefined);
    const before = await recordEvents(20);
    running = startProcess([MAIN], env);
    await eventually(() => ready(port));
    await receiver.waitFor(8);
    running.child.kill('SIGKILL');
    expect(await running.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const [{ delivered }] = (await dataSource.query(
      `SELECT count(*)::int AS delivered FROM webhook_deliveries WHERE status = 'delivered'`,
    )) as Array<{
      delivered: number;
    }>;
    expect(delivered).toBe(0);

    const during = await recordEvents(10);
    receiver.answer = () => ({ status: 200 });
    running = startProcess([MAIN], env);
    await eventually(async () => {
      const got = new Set(receiver.eventIds());
      return [...before, ...during].every((id) => got.has(id));
    });
    await eventually(async () => {
      const [{ pending }] = (await dataSource.query(
        `SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status <> 'delivered'`,
      )) as Array<{
        pending: number;
      }>;
      return pending === 0;
    });

    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});
