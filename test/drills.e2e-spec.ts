/**
 * Fault drills on the real processes: the built broker (`dist/apps/broker/src/main.js`, as `npm start`
 * runs it) and the CPaaS simulator, each a process of its own, on a real PostgreSQL, under a steady
 * stream of concurrent creates. What a user would notice: a session that was answered 201 is never
 * lost, the pool rule (docs/design.md#sessions-and-the-pool-rule) never breaks, and the broker comes back by itself.
 *
 * Every wait is a bounded count of attempts; no test measures a duration.
 */
import { createTestDatabase, type TestDatabase, WebhookReceiver } from '@app/testing';
import { clientSideClashes, overlappingPairs, startCreateLoop, type CreateLoop, type CreateRecord } from './drills/create-loop';
import { checkPoolRule, missingSessions, withClient } from '../bench/support/pool-rule';
import {
  BENCH_API_KEY,
  freePort,
  startBrokerProcess,
  startDatabase,
  startSimulatorProcess,
  waitFor,
  type BenchDatabase,
  type BrokerProcess,
  type SimulatorProcess,
} from '../bench/support/stack';
import { killedInBind } from './drills/killed-in-bind';
import { buildOnce } from './support/processes';

const ENV = { LOG_LEVEL: 'warn', SIM_SEED_NUMBERS: '5', PROVIDER_CALL_TIMEOUT_MS: '2000' };

async function readyStatus(broker: BrokerProcess): Promise<number> {
  return (await fetch(`${broker.url}/health/ready`, { signal: AbortSignal.timeout(5000) })).status;
}

/** Every session answered 201 (and not closed since) is there, through the API of `broker`. */
async function unreadable(broker: BrokerProcess, created: CreateRecord[]): Promise<string[]> {
  const missing: string[] = [];
  for (const record of created) {
    const res = await fetch(`${broker.url}/v1/sessions/${record.id}`, { headers: { authorization: `Bearer ${BENCH_API_KEY}` } });
    const body = (await res.json()) as { status?: string };
    if (res.status !== 200 || body.status !== (record.closed ? 'closed' : 'active'))
      missing.push(`${record.id}: ${res.status} ${body.status}`);
  }
  return missing;
}

function statusCounts(records: CreateRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of records) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

describe('fault drills', () => {
  let sim: SimulatorProcess;
  const started: BrokerProcess[] = [];
  let loop: CreateLoop | undefined;

  beforeAll(async () => {
    buildOnce();
    sim = await startSimulatorProcess();
  }, 300_000);

  afterEach(async () => {
    await loop?.stop();
    loop = undefined;
    for (const broker of started.splice(0)) await broker.stop();
  }, 60_000);

  afterAll(() => sim?.stop());

  async function broker(databaseUrl: string, env: Record<string, string> = {}, port?: number): Promise<BrokerProcess> {
    const running = await startBrokerProcess(databaseUrl, sim.url, { ...ENV, ...env }, { port });
    started.push(running);
    return running;
  }

  describe('kill -9 of the broker under load', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(() => db.drop());

    it('loses no session that was answered 201, and the pool rule holds after the restart', async () => {
      const first = await broker(db.url);
      loop = startCreateLoop({ brokers: () => [first.url], workers: 8, pair: overlappingPairs(60, 7), maxRequests: 4000 });
      await loop.createdAtLeast(80);
      await first.kill9();
      expect((await first.exited).signal).toBe('SIGKILL');
      const beforeRestart = loop.created().length;

      // The same port, so the clients that kept trying reach the new process.
      const second = await broker(db.url, {}, first.port);
      await loop.createdAtLeast(beforeRestart + 40);
      await loop.stop();

      const created = loop.created();
      expect(
        await missingSessions(
          db.url,
          created.map((r) => r.id!),
        ),
      ).toEqual([]);
      expect(await unreadable(second, created)).toEqual([]);
      expect(await checkPoolRule(db.url)).toMatchObject({ violations: 0, unguarded: 0 });
      expect(clientSideClashes(loop.records)).toEqual([]);
      // Only 201, pool exhaustion (503) and refused connections while no broker was up.
      const unexpected = loop.records.filter((r) => r.status !== 201 && r.status !== 0 && r.problemType !== '/problems/pool-exhausted');
      expect(unexpected).toEqual([]);
    }, 180_000);
  });

  describe("a create killed with kill -9 while stalled in the provider's bind", () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(() => db.drop());

    it.each(['in-bind', 'activated-unanswered'] as const)(
      'killed %s: after the restart a retry with the same key answers 201 with one session (the activated one, if any) and no reservation left pending',
      async (stage) => {
        const result = await killedInBind({
          db,
          sim,
          port: await freePort(),
          env: { ...ENV, PROVIDER_CALL_TIMEOUT_MS: '1000' },
          stage,
          n: stage === 'in-bind' ? 1 : 2,
        });
        expect(result).toMatchObject({
          killedWhereIntended: true,
          retry: { status: 201 },
          activeSessionsWithKey: 1,
          answeredSessionIsTheActiveOne: true,
          pendingReservationsWithKeyAfterRetry: 0,
        });
        expect(result.sameSessionAsActivated).toBe(stage === 'in-bind' ? null : true);
      },
      180_000,
    );
  });

  describe('PostgreSQL restarted under load', () => {
    let db: BenchDatabase;
    beforeAll(async () => {
      db = await startDatabase('drill_pg_restart');
    }, 60_000);
    afterAll(() => db.drop());

    it('recovers without a restart: ready goes 503 then 200, and no accepted session is lost', async () => {
      const running = await broker(db.url);
      loop = startCreateLoop({ brokers: () => [running.url], workers: 4, pair: overlappingPairs(200, 11), maxRequests: 4000, pauseMs: 10 });
      await loop.createdAtLeast(40);

      await db.stopServer();
      await waitFor('ready 503 while PostgreSQL is down', async () => (await readyStatus(running)) === 503, 100, 100);
      const outageStart = loop.records.length;
      await waitFor('creates refused while PostgreSQL is down', async () => loop!.records.length >= outageStart + 8, 200, 100);

      await db.restartServer();
      await waitFor('ready 200 once PostgreSQL is back', async () => (await readyStatus(running)) === 200, 200, 100);
      const afterRecovery = loop.created().length;
      await loop.createdAtLeast(afterRecovery + 40);
      await loop.stop();

      expect(running.running()).toBe(true);
      const created = loop.created();
      expect(
        await missingSessions(
          db.url,
          created.map((r) => r.id!),
        ),
      ).toEqual([]);
      expect(await unreadable(running, created)).toEqual([]);
      expect(await checkPoolRule(db.url)).toMatchObject({ violations: 0, unguarded: 0 });
      // While the database is away a create fails as a problem+json, never as a dropped connection.
      const failed = loop.records.filter((r) => r.status !== 201);
      expect(failed.length).toBeGreaterThan(0);
      expect(failed.filter((r) => r.status === 0 || !r.contentType?.startsWith('application/problem+json'))).toEqual([]);
    }, 180_000);
  });

  describe('PostgreSQL killed with SIGKILL under load, with its durable defaults', () => {
    let db: BenchDatabase;
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      db = await startDatabase('drill_pg_kill'); // no settings: fsync, synchronous_commit, full_page_writes on
      receiver = await WebhookReceiver.start();
    }, 60_000);
    afterAll(async () => {
      await receiver?.close();
      await db?.drop();
    });

    it('keeps every session answered 201 and its session.created webhook, and the pool rule, across crash recovery', async () => {
      const settings = await withClient(db.url, async (client) =>
        Promise.all(
          ['fsync', 'synchronous_commit', 'full_page_writes'].map(async (name) => (await client.query(`SHOW ${name}`)).rows[0][name]),
        ),
      );
      expect(settings).toEqual(['on', 'on', 'on']);
      const running = await broker(db.url, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' });
      const hook = await fetch(`${running.url}/v1/account/callback-url`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ callbackUrl: receiver.url }),
      });
      expect(hook.status).toBe(200);
      loop = startCreateLoop({ brokers: () => [running.url], workers: 4, pair: overlappingPairs(200, 13), maxRequests: 4000, pauseMs: 10 });
      await loop.createdAtLeast(40);

      await db.crashServer();
      await waitFor('ready 503 while PostgreSQL is down', async () => (await readyStatus(running)) === 503, 100, 100);
      await db.restartServer();
      await waitFor('ready 200 once PostgreSQL has recovered', async () => (await readyStatus(running)) === 200, 200, 100);
      const afterRecovery = loop.created().length;
      await loop.createdAtLeast(afterRecovery + 40);
      await loop.stop();

      expect(running.running()).toBe(true);
      // While the server is down a create fails as a problem+json, never as a dropped connection.
      const failed = loop.records.filter((r) => r.status !== 201);
      expect(failed.length).toBeGreaterThan(0);
      expect(failed.filter((r) => r.status === 0 || !r.contentType?.startsWith('application/problem+json'))).toEqual([]);
      const created = loop.created();
      const ids = created.map((r) => r.id!);
      expect(await missingSessions(db.url, ids)).toEqual([]);
      expect(await unreadable(running, created)).toEqual([]);
      expect(await checkPoolRule(db.url)).toMatchObject({ violations: 0, unguarded: 0 });
      // No webhook event lost: each accepted session's session.created reaches the endpoint.
      const announced = () =>
        new Set(
          receiver.received
            .map((r) => JSON.parse(r.body) as { type: string; data: { session?: { id: string } } })
            .filter((e) => e.type === 'session.created')
            .map((e) => e.data.session?.id),
        );
      await waitFor('every session.created delivered', async () => ids.every((id) => announced().has(id)), 600, 100).catch(() => undefined);
      expect(ids.filter((id) => !announced().has(id))).toEqual([]);
    }, 240_000);
  });

  describe('three broker processes on one PostgreSQL', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(() => db.drop());

    it('never breaks the pool rule under concurrent overlapping creates and closes', async () => {
      // Started together: bootstrap (seeding, API key) races too.
      const brokers = await Promise.all([0, 1, 2].map(() => broker(db.url, { SIM_SEED_NUMBERS: '3' })));
      // 24 people on 6 proxy numbers: every create competes for the same few (number, participant) slots.
      loop = startCreateLoop({
        brokers: () => brokers.map((b) => b.url),
        workers: 12,
        pair: overlappingPairs(24, 3),
        maxRequests: 600,
        closeShare: 0.75,
      });
      await loop.finished;

      const counts = statusCounts(loop.records);
      expect(counts['201']).toBeGreaterThan(100);
      for (const b of brokers) expect(loop.created().filter((r) => r.broker === b.url).length).toBeGreaterThan(0);
      expect(counts['503']).toBeGreaterThan(0);
      const unexpected = loop.records.filter((r) => r.status !== 201 && r.problemType !== '/problems/pool-exhausted');
      expect(unexpected).toEqual([]);
      expect(clientSideClashes(loop.records)).toEqual([]);
      expect(await checkPoolRule(db.url)).toMatchObject({ violations: 0, unguarded: 0 });
      const open = loop.created().filter((r) => !r.closed);
      expect(
        await missingSessions(
          db.url,
          open.map((r) => r.id!),
        ),
      ).toEqual([]);
    }, 180_000);
  });
});
