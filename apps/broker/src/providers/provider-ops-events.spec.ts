/**
 * The ops webhook of a breaker transition on a real PostgreSQL: its delivery is written in the transition's
 * transaction, and the delivery workers are woken (NOTIFY webhook_delivery with the ops URL) only once that
 * transaction has committed, when the store tells it on `transitions$`; a transition fenced off writes and wakes nothing.
 */
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { CircuitBreaker, telephonyPolicy, type BreakerTransition } from '@app/circuit-breaker';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { DeliveryWaker, EventOutbox } from '../notifications';
import { BreakerStateStore } from './breaker-state.store';
import type { BreakerLeadership } from './cluster/breaker-leadership';
import { ProviderOpsEvents } from './provider-ops-events';
import { BREAKER_LEASE, ProviderStateRepository } from './provider-state.repository';

const OPS_URL = 'https://ops.example/hooks/ops';

describe('ProviderOpsEvents: the ops webhook of a transition, woken after its commit', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let listener: Client;
  let store: BreakerStateStore;
  let repository: ProviderStateRepository;
  /** The URL of each wake heard. */
  const heard: string[] = [];

  const opsDeliveries = async () =>
    ((await dataSource.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE url = $1', [OPS_URL])) as Array<{ n: number }>)[0].n;

  const transition = (reason: string): { transition: BreakerTransition; snapshot: ReturnType<CircuitBreaker['toJSON']> } => {
    const breaker = new CircuitBreaker(telephonyPolicy());
    for (let i = 0; i < 5; i++) breaker.record({ kind: 'failure', reason: 'HTTP 503' });
    const snapshot = breaker.toJSON();
    breaker.dispose();
    return { transition: { from: 'CLOSED', to: 'OPEN', reason, at: snapshot.since, lastError: 'HTTP 503', forcedBy: null }, snapshot };
  };

  const until = async (done: () => boolean): Promise<void> => {
    for (let i = 0; i < 300 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 3 })).initialize();
    listener = new Client({ connectionString: db.url });
    await listener.connect();
    await listener.query('LISTEN webhook_delivery');
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    repository = new ProviderStateRepository(dataSource);
    store = new BreakerStateStore(repository, { replica: 'spec-replica' } as BreakerLeadership);
    const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000, opsWebhookUrl: OPS_URL });
    new ProviderOpsEvents(store, outbox, new DeliveryWaker(dataSource)).onModuleInit();
  });
  afterAll(async () => {
    await listener.end();
    await dataSource.destroy();
    await db.drop();
  });

  it('writes the delivery with the transition and wakes the workers for the ops URL once it has committed', async () => {
    const { transition: opened, snapshot } = transition('5 consecutive failures');
    store.recordTransition('primary', opened, snapshot, null);
    await store.flush();
    await until(() => heard.length > 0);
    expect(heard).toEqual([OPS_URL]);
    expect(await opsDeliveries()).toBe(1);
  });

  it('writes and wakes nothing for a transition fenced off', async () => {
    heard.length = 0;
    await repository.claimLease(BREAKER_LEASE, 'someone-else', 60_000);
    const { transition: stale, snapshot } = transition('from a former leader');
    store.recordTransition('primary', stale, snapshot, { holder: 'spec-replica', epoch: 1 });
    await store.flush();
    await new Promise((r) => setTimeout(r, 200));
    expect(heard).toEqual([]);
    expect(await opsDeliveries()).toBe(1);
  });
});
