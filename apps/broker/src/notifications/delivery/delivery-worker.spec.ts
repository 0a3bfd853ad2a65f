/**
 * The delivery worker against a real PostgreSQL and real local HTTP receivers, with time moved by hand:
 * the retry schedule, the down mode, the per-URL breaker, the 72 h give-up, the in-flight cap across
 * replicas and the takeover of a vanished replica's endpoints, without waiting for any of it.
 */
import { VirtualTimeScheduler, type SchedulerLike } from 'rxjs';
import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { constructEvent } from '@app/sdk';
import { createTestDatabase, type TestDatabase, ManualClock, WebhookReceiver } from '@app/testing';
import { loadConfig } from '../../config';
import { ENTITIES } from '../../entities';
import { ListenClient } from '../../database/listen-client';
import { transactionThenWake } from '../events/delivery-wakes';
import { EventOutbox } from '../events/event-outbox';
import { workerSettings, type NotificationSettings } from '../notification-settings';
import { WebhookSecretRepository } from '../../accounts/webhook-secrets/webhook-secret.repository';
import { WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import { DeliveryStore } from './delivery-store';
import { DeliveryWorker } from './delivery-worker';
import { SignedRequestPreparer } from './signed-request';
import { WebhookSender } from './webhook-sender';

const T0 = Date.UTC(2026, 6, 15, 12, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;
const quiet = { log: () => undefined, warn: () => undefined };
const failOnWarning = (message: string) => {
  throw new Error(message);
};

interface DeliveryRow {
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  given_up_at: Date | null;
}

describe('DeliveryWorker', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let receiver: WebhookReceiver;
  let clock: ManualClock;
  let settings: NotificationSettings;
  let secrets: WebhookSecrets;
  let outbox: EventOutbox;
  let listener: ListenClient;
  const workers: DeliveryWorker[] = [];
  const senders: WebhookSender[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 10 })).initialize();
    listener = new ListenClient(db.url);
    await listener.start();
  });
  afterAll(async () => {
    await listener.stop();
    await dataSource.destroy();
    await db.drop();
  });

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
    clock = new ManualClock(T0);
    settings = loadConfig({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      OPS_WEBHOOK_URL: `${receiver.url}/ops`,
      OPS_WEBHOOK_SECRET: 'ops-secret-0123456789',
    }).notifications;
    secrets = new WebhookSecrets(new WebhookSecretRepository(dataSource), settings.secretOverlapMs, clock);
    outbox = new EventOutbox(clock, settings);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await Promise.all(senders.splice(0).map((s) => s.close()));
    await receiver.close();
  });

  function worker(
    overrides: Partial<NotificationSettings> = {},
    random = () => 0.5,
    pacing: { scheduler?: SchedulerLike; lingerMs?: number; store?: DeliveryStore } = {},
  ): DeliveryWorker {
    const s = { ...settings, ...overrides };
    const sender = new WebhookSender({
      connectTimeoutMs: s.connectTimeoutMs,
      attemptTimeoutMs: s.attemptTimeoutMs,
      allowPrivateTargets: true,
    });
    senders.push(sender);
    const w = new DeliveryWorker({
      store: pacing.store ?? new DeliveryStore(dataSource),
      sender,
      preparer: new SignedRequestPreparer(secrets, s.opsWebhookSecret),
      clock,
      // No lingering unless asked: `whenIdle` returns as soon as nothing is due.
      settings: { ...workerSettings(s), lingerMs: pacing.lingerMs ?? 0 },
      logger: quiet,
      random,
      listener,
      scheduler: pacing.scheduler,
    });
    workers.push(w);
    return w;
  }

  async function account(defaultUrl: string | null = null): Promise<string> {
    const [row] = (await dataSource.query('INSERT INTO accounts (name, default_callback_url) VALUES ($1, $2) RETURNING id', [
      'acme',
      defaultUrl,
    ])) as Array<{ id: string }>;
    return row.id;
  }

  async function record(
    accountId: string,
    callbackUrl: string | null,
    data: Record<string, unknown> = {},
  ): Promise<{ eventId: string; deliveryId: string | null }> {
    return transactionThenWake(dataSource, failOnWarning, (manager, wakes) =>
      outbox.record(
        manager,
        { type: 'session.created', accountId, sessionId: '5d1e5f3c-1f7a-4b8e-9a51-0c6a1d1e2f30', callbackUrl, data },
        wakes,
      ),
    );
  }

  async function delivery(id: string | null): Promise<DeliveryRow> {
    const [row] = (await dataSource.query(
      'SELECT status, attempts, next_attempt_at, last_error, given_up_at FROM webhook_deliveries WHERE id = $1',
      [id],
    )) as DeliveryRow[];
    return row;
  }

  async function run(...ws: DeliveryWorker[]): Promise<void> {
    for (const w of ws) await w.runOnce();
    await Promise.all(ws.map((w) => w.whenIdle()));
  }

  it('delivers a recorded event once, with the Standard Webhooks headers, signed with the account secret', async () => {
    const acct = await account();
    const { eventId, deliveryId } = await record(acct, receiver.url, { sessionId: 's1' });
    await run(worker());

    expect(receiver.received).toHaveLength(1);
    const [got] = receiver.received;
    expect(got.headers['webhook-id']).toBe(deliveryId);
    expect(got.headers['webhook-timestamp']).toBe(String(T0 / 1000));
    const payload = constructEvent(got.body, got.headers, await secrets.signingSecrets(acct), { now: T0 });
    // No receivedAt given: the broker learned of it when it was recorded.
    expect(payload).toEqual({
      id: eventId,
      type: 'session.created',
      timestamp: new Date(T0).toISOString(),
      data: { sessionId: 's1', receivedAt: new Date(T0).toISOString() },
    });
    expect(await delivery(deliveryId)).toMatchObject({ status: 'delivered', attempts: 1, last_error: null });
  });

  it("goes to the session's URL, else the account's default, else nowhere (the event is kept); a rollback leaves nothing", async () => {
    const acct = await account(`${receiver.url}/default`);
    await record(acct, `${receiver.url}/session`);
    await record(acct, null);
    const bare = await account(null);
    const none = await record(bare, null);
    expect(none.deliveryId).toBeNull();
    await expect(
      transactionThenWake(dataSource, failOnWarning, async (manager, wakes) => {
        await outbox.record(
          manager,
          {
            type: 'session.closed',
            accountId: acct,
            sessionId: '5d1e5f3c-1f7a-4b8e-9a51-0c6a1d1e2f30',
            callbackUrl: null,
            data: {},
          },
          wakes,
        );
        throw new Error('the session change failed');
      }),
    ).rejects.toThrow('the session change failed');
    await run(worker());

    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/hooks/default', '/hooks/session']);
    const [{ count }] = (await dataSource.query(
      `SELECT count(*)::int AS count FROM webhook_events WHERE type = 'session.closed'`,
    )) as Array<{ count: number }>;
    expect(count).toBe(0);
    const [{ stored }] = (await dataSource.query('SELECT count(*)::int AS stored FROM webhook_events WHERE account_id = $1', [
      bare,
    ])) as Array<{
      stored: number;
    }>;
    expect(stored).toBe(1);
  });

  it('refuses a body over 256 KB when recording', async () => {
    const acct = await account();
    await expect(record(acct, receiver.url, { text: 'x'.repeat(256 * 1024) })).rejects.toThrow(/at most 262144 are sent/);
  });

  it('retries a non-2xx and a 3xx on the schedule (5 s doubling, +≤50 %), then delivers', async () => {
    const answers = [{ status: 500 }, { status: 302, headers: { location: '/elsewhere' } }, { status: 200 }];
    receiver.answer = () => answers.shift() ?? { status: 200 };
    const w = worker({}, () => 0.5);
    const acct = await account();
    const { deliveryId } = await record(acct, receiver.url);

    await run(w);
    let row = await delivery(deliveryId);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP 500' });
    // 5 s × (1 + 0.5 × 0.5)
    expect(row.next_attempt_at!.getTime() - T0).toBe(6_250);

    clock.set(T0 + 6_249);
    await run(w);
    expect(receiver.received).toHaveLength(1);
    clock.set(T0 + 6_250);
    await run(w);
    row = await delivery(deliveryId);
    expect(row).toMatchObject({ status: 'pending', attempts: 2, last_error: 'HTTP 302: redirects are not followed' });
    expect(row.next_attempt_at!.getTime() - clock.now()).toBe(12_500);

    clock.advance(12_500);
    await run(w);
    expect(await delivery(deliveryId)).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(receiver.received.map((r) => r.path)).toEqual(['/hooks', '/hooks', '/hooks']);
    const attempts = (await dataSource.query(
      'SELECT number, status_code, error, delivered FROM webhook_attempts WHERE delivery_id = $1 ORDER BY number',
      [deliveryId],
    )) as unknown[];
    expect(attempts).toEqual([
      { number: 1, status_code: 500, error: 'HTTP 500', delivered: false },
      { number: 2, status_code: 302, error: 'HTTP 302: redirects are not followed', delivered: false },
      { number: 3, status_code: 200, error: null, delivered: true },
    ]);
  });

  it('an endpoint down after 3 failures gets one attempt every 5 minutes however many wait, and flows again after a 2xx', async () => {
    receiver.answer = () => ({ status: 503 });
    const w = worker({}, () => 0);
    const acct = await account();
    const first = await record(acct, receiver.url);
    // Failures 1, 2, 3 on the retry schedule (5 s, then 10 s with no jitter drawn).
    await run(w);
    clock.advance(5_000);
    await run(w);
    clock.advance(10_000);
    await run(w);
    expect(receiver.received).toHaveLength(3);
    const downAt = clock.now();

    const waiting = [];
    for (let i = 0; i < 10; i++) waiting.push(await record(acct, receiver.url));
    await run(w);
    clock.set(downAt + 5 * MIN - 1);
    await run(w);
    expect(receiver.received).toHaveLength(3);
    // Skipped, not attempted: postponed to the endpoint's next attempt.
    expect(await delivery(waiting[0].deliveryId)).toMatchObject({ status: 'pending', attempts: 0 });

    clock.set(downAt + 5 * MIN);
    await run(w);
    expect(receiver.received).toHaveLength(4);

    clock.advance(4 * MIN);
    await run(w);
    expect(receiver.received).toHaveLength(4);

    receiver.answer = () => ({ status: 200 });
    clock.advance(1 * MIN);
    await run(w);
    expect(receiver.received).toHaveLength(4 + 11);
    for (const { deliveryId } of [first, ...waiting]) expect((await delivery(deliveryId)).status).toBe('delivered');
  });

  it('a 2xx ends the down state at once, even one answering an attempt that started before the 3rd failure', async () => {
    // The first attempt to arrive is held; every other one fails until it is answered: the endpoint goes down
    // while the first is still out.
    let answerHeld: (() => void) | null = null;
    let heldAnswered = false;
    receiver.answer = () => {
      if (receiver.received.length === 1)
        return new Promise((resolve) => (answerHeld = () => ((heldAnswered = true), resolve({ status: 200 }))));
      return { status: heldAnswered ? 200 : 503 };
    };
    // 4 in flight at most, 14 due: most of them are queued in the lane when the endpoint goes down.
    const w = worker({ maxInFlightPerEndpoint: 4 }, () => 0);
    const acct = await account();
    const recorded = [];
    for (let i = 0; i < 14; i++) recorded.push(await record(acct, receiver.url));
    await w.runOnce();
    const downState = async () =>
      (
        (await dataSource.query('SELECT down_breaker FROM webhook_endpoints WHERE url = $1', [receiver.url])) as Array<{
          down_breaker: { state: string } | null;
        }>
      )[0]?.down_breaker?.state;
    while ((await downState()) !== 'OPEN') await new Promise((resolve) => setTimeout(resolve, 10));
    const beforeAnswer = receiver.received.length;
    expect(beforeAnswer).toBeLessThan(14);

    // No time passes: the late 2xx alone lets the rest flow (the failed ones and those still waiting).
    answerHeld!();
    await w.whenIdle();
    expect(clock.now()).toBe(T0);
    for (const { deliveryId } of recorded) expect((await delivery(deliveryId)).status).toBe('delivered');
    expect(receiver.received.length).toBe(14 + (beforeAnswer - 1));
    expect(await downState()).toBe('CLOSED');
  });

  it('a URL down for an hour gets an attempt every 5 min (at most 6 with the breaker jitter), never the breaker 8 or 10 min', async () => {
    receiver.answer = () => ({ status: 503 });
    // The largest draw: every wait as long as its jitter allows.
    const w = worker({}, () => 0.999_999);
    const acct = await account();
    const { deliveryId } = await record(acct, receiver.url);
    const attemptTimes: number[] = [];
    // Step the clock from one due time to the next (the delivery's own, or the URL's block), an hour long.
    for (let step = 0; step < 500 && clock.now() < T0 + HOUR; step++) {
      const before = receiver.received.length;
      await run(w);
      if (receiver.received.length > before) attemptTimes.push(clock.now());
      const next = (await delivery(deliveryId)).next_attempt_at;
      if (next === null) throw new Error('the delivery stopped being scheduled');
      clock.set(Math.max(next.getTime(), clock.now() + 1));
    }
    const gaps = attemptTimes.slice(1).map((t, i) => t - attemptTimes[i]);
    // Failures 1 and 2 on the retry schedule (5 s and 10 s, each +50 %); from the 3rd the URL is down.
    expect(gaps.slice(0, 2)).toEqual([7_500, 15_000]);
    const downGaps = gaps.slice(2);
    expect(downGaps.filter((gap) => gap < 5 * MIN || gap > 6 * MIN).map((gap) => gap / MIN)).toEqual([]);
    // An hour of 5–6 minute gaps, after the first 22.5 s.
    expect(downGaps.length).toBeGreaterThanOrEqual(10);
  });

  it('each callback URL has its own breaker: a failing URL opens only its own, and what it skips is postponed, not dropped', async () => {
    receiver.answer = (req) => ({ status: req.path === '/hooks/bad' ? 500 : 200 });
    // The down rule out of the way: the breaker alone.
    const w = worker({ downAfterFailures: 1000 }, () => 0.5);
    const acct = await account();
    const bad = `${receiver.url}/bad`;
    const good = `${receiver.url}/good`;
    const failing = [];
    for (let i = 0; i < 5; i++) failing.push(await record(acct, bad));
    await run(w);
    expect(receiver.received.filter((r) => r.path === '/hooks/bad')).toHaveLength(5);
    const [endpoint] = (await dataSource.query('SELECT blocked_until, url_breaker FROM webhook_endpoints WHERE url = $1', [bad])) as Array<{
      blocked_until: Date;
      url_breaker: { state: string };
    }>;
    expect(endpoint.url_breaker.state).toBe('OPEN');
    expect(endpoint.blocked_until.getTime() - T0).toBe(MIN);

    const skipped = await record(acct, bad);
    const other = await record(acct, good);
    await run(w);
    expect(receiver.received.filter((r) => r.path === '/hooks/good')).toHaveLength(1);
    expect(receiver.received.filter((r) => r.path === '/hooks/bad')).toHaveLength(5);
    expect(await delivery(other.deliveryId)).toMatchObject({ status: 'delivered' });
    expect(await delivery(skipped.deliveryId)).toMatchObject({ status: 'pending', attempts: 0 });
    expect((await delivery(skipped.deliveryId)).next_attempt_at!.getTime()).toBe(T0 + MIN);

    receiver.answer = () => ({ status: 200 });
    clock.set(T0 + MIN);
    await run(w);
    for (const { deliveryId } of [...failing, skipped]) expect((await delivery(deliveryId)).status).toBe('delivered');
  });

  it("keeps each account's endpoint apart: another account failing at the same URL never takes it down", async () => {
    // Tenant B names tenant A's receiver; the receiver refuses every webhook not meant for A.
    const a = await account();
    const b = await account();
    const [aSecret] = await secrets.signingSecrets(a);
    receiver.answer = (req) => {
      try {
        constructEvent(req.body, req.headers, [aSecret], { now: clock.now() });
        return { status: 204 };
      } catch {
        return { status: 401 };
      }
    };
    const w = worker({}, () => 0);
    const fromB = [];
    for (let i = 0; i < 5; i++) fromB.push(await record(b, receiver.url));
    // B's five attempts fail together: B's endpoint is down.
    await run(w);
    const endpoints = (await dataSource.query(
      `SELECT account_id, down_breaker->>'state' AS down, blocked_until FROM webhook_endpoints WHERE url = $1 ORDER BY account_id = $2`,
      [receiver.url, b],
    )) as Array<{ account_id: string; down: string; blocked_until: Date | null }>;
    expect(endpoints).toEqual([{ account_id: b, down: 'OPEN', blocked_until: new Date(T0 + 5 * MIN) }]);

    // A's event goes at once, and A's endpoint is healthy; B's stays down.
    const fromA = await record(a, receiver.url);
    await run(w);
    expect(await delivery(fromA.deliveryId)).toMatchObject({ status: 'delivered', attempts: 1 });
    const after = (await dataSource.query(
      `SELECT account_id, down_breaker->>'state' AS down FROM webhook_endpoints WHERE url = $1 ORDER BY account_id = $2`,
      [receiver.url, b],
    )) as Array<{ account_id: string; down: string }>;
    expect(after).toEqual([
      { account_id: a, down: 'CLOSED' },
      { account_id: b, down: 'OPEN' },
    ]);
    for (const { deliveryId } of fromB) expect(await delivery(deliveryId)).toMatchObject({ status: 'pending' });
  });

  it("the operator's ops webhooks to a URL an account also uses have an endpoint of their own", async () => {
    // The account's callback URL is OPS_WEBHOOK_URL; the receiver takes only the ops events.
    const acct = await account();
    const shared = settings.opsWebhookUrl!;
    receiver.answer = (req) => ({ status: (JSON.parse(req.body) as { type: string }).type === 'provider.state_changed' ? 200 : 503 });
    const w = worker({}, () => 0);
    for (let i = 0; i < 3; i++) await record(acct, shared);
    await run(w);
    clock.advance(5_000);
    await run(w);
    clock.advance(10_000);
    await run(w);
    const ops = await transactionThenWake(dataSource, failOnWarning, (manager, wakes) =>
      outbox.recordOps(manager, { type: 'provider.state_changed', data: { provider: 'primary', from: 'CLOSED', to: 'OPEN' } }, wakes),
    );
    await run(w);
    expect(await delivery(ops!.deliveryId)).toMatchObject({ status: 'delivered' });
    const rows = (await dataSource.query(
      `SELECT account_id, down_breaker->>'state' AS down FROM webhook_endpoints WHERE url = $1 ORDER BY account_id NULLS FIRST`,
      [shared],
    )) as Array<{ account_id: string | null; down: string }>;
    expect(rows).toEqual([
      { account_id: null, down: 'CLOSED' },
      { account_id: acct, down: 'OPEN' },
    ]);
  });

  it('gives a webhook up 72 h after it was recorded, and never sends it again', async () => {
    receiver.answer = () => ({ status: 500 });
    const w = worker();
    const acct = await account();
    const { deliveryId } = await record(acct, receiver.url);
    await run(w);
    clock.set(T0 + 72 * HOUR - 1);
    await run(w);
    const before = receiver.received.length;
    expect(before).toBe(2);
    expect(await delivery(deliveryId)).toMatchObject({ status: 'pending' });
    expect((await delivery(deliveryId)).next_attempt_at!.getTime()).toBe(T0 + 72 * HOUR);

    clock.set(T0 + 72 * HOUR);
    await run(w);
    const row = await delivery(deliveryId);
    expect(row).toMatchObject({ status: 'given_up', attempts: 2, next_attempt_at: null });
    expect(row.given_up_at!.getTime()).toBe(T0 + 72 * HOUR);

    receiver.answer = () => ({ status: 200 });
    clock.set(T0 + 100 * HOUR);
    await run(w);
    expect(receiver.received).toHaveLength(before);
  });

  it('keeps at most 8 attempts in flight per endpoint, even with two replicas', async () => {
    const release: Array<() => void> = [];
    receiver.answer = () => new Promise((resolve) => release.push(() => resolve({ status: 200 })));
    const a = worker();
    const b = worker();
    const acct = await account();
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await record(acct, receiver.url)).deliveryId);
    await a.runOnce();
    await b.runOnce();
    await receiver.waitFor(8);
    expect([...a.activeEndpoints(), ...b.activeEndpoints()]).toEqual([{ accountId: acct, url: receiver.url }]);
    while (receiver.received.length < 20 || release.length > 0) {
      if (release.length === 0) await receiver.waitFor(receiver.received.length + 1);
      release.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all([a.whenIdle(), b.whenIdle()]);
    expect(receiver.maxInFlight).toBe(8);
    expect(receiver.received).toHaveLength(20);
    for (const id of ids) expect((await delivery(id)).status).toBe('delivered');
  });

  it('takes over the endpoints of a replica that vanished, once its lease ran out: nothing is lost', async () => {
    const held: Array<() => void> = [];
    receiver.answer = () => new Promise((resolve) => held.push(() => resolve({ status: 200 })));
    const gone = worker();
    const acct = await account();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await record(acct, receiver.url)).deliveryId);
    await gone.runOnce();
    await receiver.waitFor(3);
    // `gone` stops renewing (no heartbeat: it is frozen); another replica finds the endpoint owned until the lease ends.
    const next = worker();
    clock.advance(settings.leaseMs - 1);
    await run(next);
    expect(receiver.received).toHaveLength(3);
    clock.advance(1);
    receiver.answer = () => ({ status: 200 });
    await run(next);
    expect(receiver.received).toHaveLength(6);
    for (const id of ids) expect((await delivery(id)).status).toBe('delivered');
    // The same deliveries, so the same webhook-id: a receiver can drop the duplicates.
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(3);
    for (const resolve of held) resolve();
    await gone.whenIdle();
  });

  it('after a database failover works on again at once on the endpoint its failed lane could not release (no lease to wait out)', async () => {
    // The store as a failover shows it: every statement fails while `down` (the pool reaches no leader).
    const state = { down: false };
    const real = new DeliveryStore(dataSource);
    const store = new Proxy(real, {
      get(target, name, receiverOfGet) {
        const value = Reflect.get(target, name, receiverOfGet) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          state.down
            ? Promise.reject(new Error('Connection terminated unexpectedly'))
            : (value as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
    const held: Array<() => void> = [];
    receiver.answer = () => new Promise((resolve) => held.push(() => resolve({ status: 200 })));
    const w = worker({}, () => 0.5, { store });
    const acct = await account();
    const first = (await record(acct, receiver.url)).deliveryId;
    await w.runOnce();
    await receiver.waitFor(1);

    // The leader goes while the attempt is in flight: its outcome cannot be written, nor the endpoint released.
    state.down = true;
    for (const resolve of held.splice(0)) resolve();
    await w.whenIdle();
    state.down = false;

    // The database is back (the LISTEN connection's return runs a cycle): no clock moved, no lease run out.
    receiver.answer = () => ({ status: 200 });
    const second = (await record(acct, receiver.url)).deliveryId;
    await run(w);
    expect((await delivery(first)).status).toBe('delivered');
    expect((await delivery(second)).status).toBe('delivered');
    // The first went twice (its outcome was lost with the database), under one webhook-id.
    expect(receiver.received.map((r) => r.headers['webhook-id']).sort()).toEqual([first, first, second].sort());
  });

  it('sends provider.state_changed to OPS_WEBHOOK_URL, signed with OPS_WEBHOOK_SECRET', async () => {
    const transitionAt = new Date(T0 - 1_500);
    const recorded = await transactionThenWake(dataSource, failOnWarning, (manager, wakes) =>
      outbox.recordOps(
        manager,
        { type: 'provider.state_changed', data: { provider: 'primary', from: 'CLOSED', to: 'OPEN' }, receivedAt: transitionAt },
        wakes,
      ),
    );
    expect(recorded?.deliveryId).toBeTruthy();
    await run(worker());
    const [got] = receiver.received;
    expect(got.path).toBe('/hooks/ops');
    expect(constructEvent(got.body, got.headers, 'ops-secret-0123456789', { now: T0 })).toMatchObject({
      type: 'provider.state_changed',
      timestamp: new Date(T0).toISOString(),
      data: { provider: 'primary', to: 'OPEN', receivedAt: transitionAt.toISOString() },
    });
  });

  it('is woken by the NOTIFY of a committed outbox row, and stops cleanly', async () => {
    const w = worker({ pollIntervalMs: 3_600_000 });
    await w.start();
    const acct = await account();
    await record(acct, receiver.url);
    await receiver.waitFor(1);
    await w.stop();
    expect(receiver.received).toHaveLength(1);
  });

  it('lingers on an idle endpoint for lingerMs of its scheduler (not 1 ms less), then lets it go, without waiting', async () => {
    const scheduler = new VirtualTimeScheduler();
    const advanceTo = (frame: number): void => {
      scheduler.maxFrames = frame;
      scheduler.flush();
    };
    // Only this test's endpoint: what earlier tests left pending for their closed receivers is set aside.
    await dataSource.query("UPDATE webhook_deliveries SET status = 'given_up', next_attempt_at = NULL WHERE status = 'pending'");
    const w = worker({ pollIntervalMs: HOUR }, undefined, { scheduler, lingerMs: MIN });
    const acct = await account();
    const { deliveryId } = await record(acct, receiver.url);
    await w.runOnce();
    await receiver.waitFor(1);
    // The outcome is written, then the lane, with nothing due, sets its linger on the scheduler.
    while (!scheduler.actions.some((action) => action.delay === MIN)) await new Promise((resolve) => setImmediate(resolve));
    expect(await delivery(deliveryId)).toMatchObject({ status: 'delivered', attempts: 1 });

    advanceTo(MIN - 1);
    expect(w.activeEndpoints()).toEqual([{ accountId: acct, url: receiver.url }]);
    advanceTo(MIN);
    await w.whenIdle();
    expect(w.activeEndpoints()).toEqual([]);
    expect(receiver.received).toHaveLength(1);
  });
});
