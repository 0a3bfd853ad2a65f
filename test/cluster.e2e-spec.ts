/**
 * One breaker for the whole cluster (issues #13 and #27, docs/operations.md): three built broker processes (as
 * `npm start` runs them) on one database and one simulator, intervals shortened through the environment.
 * Replica C reaches PostgreSQL through a TCP proxy the test can cut. Every wait polls with a generous bound;
 * assertions are on counts (the simulator's call log, breaker counters), and on one lower bound of wall time:
 * no two health checks closer than an interval, across a kill -9 of the leader (checks can only come late).
 */
import request from 'supertest';
import { AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { TEST_WEBHOOK_SECRET, UNTHROTTLED, startSimulator, type SimulatorHarness } from './support/broker-harness';
import { buildOnce, eventually, freePort, startProcess, type RunningProcess } from './support/processes';
import { clearSimCalls, setFault, simCalls } from './support/sim-control';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { createTestDatabase, type TestDatabase } from '@app/testing';

const MAIN = 'dist/apps/broker/src/main.js';
const INTERVAL = 2_000;
/**
 * How much earlier than an interval a check may reach the simulator: the time between a leader claiming it in
 * PostgreSQL and the simulator receiving it (the claim's commit, the HTTP request), for a leader killed just
 * after. A few ms on an idle machine; hundreds on two cores shared with other suites. Three
 * replicas checking on their own would put gaps of a third of an interval and less.
 */
const SLACK_MS = INTERVAL / 4;

interface Replica {
  name: string;
  url: string;
  process: RunningProcess;
}

interface ProviderView {
  name: string;
  state: 'CLOSED' | 'OPEN' | 'HALF_OPEN';
  scope: 'cluster' | 'replica';
  leader: string | null;
  healthPasses: number;
  consecutiveFailures: number;
  disabled: boolean;
}

interface HealthView {
  replica: string;
  leader: string | null;
  providers: ProviderView[];
}

async function health(replica: Replica): Promise<HealthView> {
  const res = await request(replica.url).get('/v1/health/cpaas').timeout(5_000);
  if (res.status !== 200) throw new Error(`${replica.name}: ${res.status}`);
  return res.body as HealthView;
}

async function primaryOn(replica: Replica): Promise<ProviderView> {
  return (await health(replica)).providers.find((p) => p.name === 'primary')!;
}

/** Polls until `check` holds on every replica given (generous: a loaded 2-core machine). */
async function onEvery(replicas: Replica[], check: (p: ProviderView) => boolean): Promise<void> {
  await eventually(async () => (await Promise.all(replicas.map(primaryOn))).every(check), 600, 100);
}

describe('three replicas, one breaker', () => {
  let db: TestDatabase;
  let sim: SimulatorHarness;
  let proxy: TcpProxy;
  let replicas: Replica[] = [];
  let a: Replica;
  let b: Replica;
  let c: Replica;

  beforeAll(() => buildOnce(), 240_000);
  beforeAll(async () => {
    db = await createTestDatabase();
    sim = await startSimulator();
    const target = new URL(db.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const start = async (name: string, databaseUrl: string): Promise<Replica> => {
      const port = await freePort();
      const process = startProcess([MAIN], {
        ...AUTH_ENV,
        ...UNTHROTTLED,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        PROVIDERS: `primary=sim:${sim.url},failover=sim:${sim.url}`,
        SIM_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
        LOG_LEVEL: 'warn',
        DATABASE_POOL_SIZE: '3',
        BREAKER_HEALTH_INTERVAL_MS: String(INTERVAL),
        // HALF_OPEN closes on its first probe session (every HALF_OPEN create is one; health checks alone
        // never close), so one test can take the primary back to CLOSED.
        BREAKER_CLOSE_AFTER_MS: '0',
        BREAKER_CLOSE_MIN_PROBES: '1',
        BREAKER_HALF_OPEN_PROBE_SHARE: '1',
      });
      const replica = { name, url: `http://127.0.0.1:${port}`, process };
      replicas.push(replica);
      return replica;
    };
    // One after the other: A leads from the start.
    a = await start('A', db.url);
    await eventually(async () => (await fetch(`${a.url}/health`)).status === 200, 600, 100);
    [b, c] = await Promise.all([start('B', db.url), start('C', viaProxy.toString())]);
    for (const r of [b, c]) await eventually(async () => (await fetch(`${r.url}/health`)).status === 200, 600, 100);
  }, 180_000);

  afterAll(async () => {
    for (const r of replicas) {
      if (r.process.child.exitCode === null && r.process.child.signalCode === null) r.process.child.kill('SIGKILL');
      await r.process.exited;
    }
    await proxy?.close();
    await sim?.app.close();
    await db?.drop();
  });

  async function create(on: Replica): Promise<string> {
    const res = await createSession(on.url, sessionBody(freshPair())).timeout(15_000);
    if (res.status !== 201) throw new Error(`${on.name}: create answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.provider as string;
  }

  it('all three follow one leader, scope "cluster"', async () => {
    await eventually(async () => {
      const views = await Promise.all([a, b, c].map(health));
      return views.every((v) => v.leader === views[0].replica && v.providers.every((p) => p.scope === 'cluster'));
    });
    expect((await health(a)).leader).toBe((await health(a)).replica);
  }, 60_000);

  it('counts the cluster’s calls in the 2-minute window: 11 calls over three replicas, 2 failed → OPEN', async () => {
    const order = [a, b, c];
    // 10 calls, 1 failed: 10 % does not trip; the 11th, failed, makes 2/11 > 10 %.
    const fails = new Set([5, 10]);
    for (let i = 0; i < 11; i++) {
      const on = order[i % 3];
      await setFault(sim.url, 'primary', { mode: fails.has(i) ? 'down' : 'ok' });
      await create(on);
      if (i === 9) {
        // Every outcome so far has reached the leader; still CLOSED.
        await eventually(async () => (await primaryOn(a)).state === 'CLOSED');
        expect((await primaryOn(a)).state).toBe('CLOSED');
      }
    }
    await onEvery([a, b, c], (p) => p.state === 'OPEN');
  }, 120_000);

  it('runs one health check per interval cluster-wide; a failing check resets the cluster’s pass count', async () => {
    await setFault(sim.url, 'primary', { mode: 'down' });
    await clearSimCalls(sim.url, 'primary');
    await eventually(async () => (await simCalls(sim.url, 'primary', 'health')).length >= 4, 600, 100);
    const checks = await simCalls(sim.url, 'primary', 'health');
    const gaps = checks.slice(1).map((call, i) => Date.parse(call.at) - Date.parse(checks[i].at));
    // Three replicas checking would put three checks in one interval; one leader puts one.
    expect(gaps.every((gap) => gap > INTERVAL / 2)).toBe(true);

    await setFault(sim.url, 'primary', { mode: 'ok' });
    await onEvery([a, b, c], (p) => p.state === 'OPEN' && p.healthPasses >= 2);
    await setFault(sim.url, 'primary', { mode: 'down' });
    await onEvery([a, b, c], (p) => p.state === 'OPEN' && p.healthPasses === 0);
    await setFault(sim.url, 'primary', { mode: 'ok' });
    // 5 passes in a row to HALF_OPEN; there the passing checks go on, and the first probe session closes it.
    await onEvery([a, b, c], (p) => p.state === 'HALF_OPEN');
    const halfOpen = await simCalls(sim.url, 'primary', 'health');
    const lastFail = halfOpen.map((call) => call.outcome !== 'ok').lastIndexOf(true);
    expect(lastFail).toBeGreaterThanOrEqual(0);
    // Never fewer than 5 passing checks after the reset.
    expect(halfOpen.length - lastFail - 1).toBeGreaterThanOrEqual(5);
    expect(await create(b)).toBe('primary');
    await onEvery([a, b, c], (p) => p.state === 'CLOSED');
  }, 180_000);

  it('opens on every replica at exactly the 5th consecutive failure cluster-wide (5 failed binds, not 13)', async () => {
    await onEvery([a, b, c], (p) => p.state === 'CLOSED');
    await setFault(sim.url, 'primary', { mode: 'down' });
    await clearSimCalls(sim.url, 'primary');
    const order = [a, b, c, a, b];
    for (let i = 0; i < 5; i++) expect(await create(order[i])).toBe('failover');
    await onEvery([a, b, c], (p) => p.state === 'OPEN');
    // Round-robin once more: every replica now sends straight to the failover.
    for (const on of [c, a, b]) expect(await create(on)).toBe('failover');
    const binds = await simCalls(sim.url, 'primary', 'bind');
    expect(binds).toHaveLength(5);
    expect(binds.every((bind) => bind.outcome !== 'ok')).toBe(true);
  }, 120_000);

  it('a replica cut off from the database says "scope": "replica" and rejoins the cluster’s state when it returns', async () => {
    const other = a;
    proxy.cut();
    await eventually(async () => (await primaryOn(c)).scope === 'replica', 600, 100);
    expect((await health(c)).leader).toBeNull();
    // Meanwhile the cluster moves on without C: an operator disables the failover.
    await request(other.url)
      .post('/v1/admin/providers/failover/disable')
      .set('authorization', `Bearer ${AUTH_ENV.ADMIN_TOKEN}`)
      .send({})
      .expect(200);
    expect((await health(c)).providers.find((p) => p.name === 'failover')!.disabled).toBe(false);
    proxy.restore();
    await eventually(
      async () => {
        const view = await health(c);
        return view.providers.every((p) => p.scope === 'cluster') && view.providers.find((p) => p.name === 'failover')!.disabled;
      },
      600,
      100,
    );
    await request(other.url).post('/v1/admin/providers/failover/enable').set('authorization', `Bearer ${AUTH_ENV.ADMIN_TOKEN}`).expect(200);
  }, 180_000);
  it('kill -9 the leader: another replica leads, and no two health checks come within one interval across it', async () => {
    // The primary is OPEN (down): the leader checks it every interval. From a clean log, one check or two
    // by the first leader, the kill right after one, then the new leader's.
    await clearSimCalls(sim.url, 'primary');
    await eventually(async () => (await simCalls(sim.url, 'primary', 'health')).length >= 2, 600, 20);
    const before = await health(a);
    const leader = [a, b, c].find((r) => before.leader?.includes(`:${r.process.child.pid}:`))!;
    expect(leader).toBeDefined();
    const others = [a, b, c].filter((r) => r !== leader);
    const seen = (await simCalls(sim.url, 'primary', 'health')).length;
    await eventually(async () => (await simCalls(sim.url, 'primary', 'health')).length > seen, 600, 5);
    leader.process.child.kill('SIGKILL');
    await leader.process.exited;
    await eventually(
      async () => {
        const views = await Promise.all(others.map(health));
        return views.every((v) => v.leader !== null && v.leader !== before.leader && v.leader === views[0].leader);
      },
      600,
      100,
    );
    const atKill = (await simCalls(sim.url, 'primary', 'health')).length;
    await eventually(async () => (await simCalls(sim.url, 'primary', 'health')).length >= atKill + 2, 600, 100);
    const checks = await simCalls(sim.url, 'primary', 'health');
    const gaps = checks.slice(1).map((call, i) => Date.parse(call.at) - Date.parse(checks[i].at));
    console.log(`health-check gaps across the leader's kill -9 (interval ${INTERVAL} ms): ${gaps.join(', ')} ms`);
    // A lower bound on wall time is safe on a loaded machine (checks can only come late). The slack is the
    // time between the leader claiming a check in PostgreSQL and the simulator receiving it, for a leader
    // killed between the check and recording its end.
    replicas = replicas.filter((r) => r !== leader);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL - SLACK_MS);
  }, 120_000);

  it('kill -9 the leader in CLOSED after 4 failures in a row: the new leader carries the count on, and the 5th opens', async () => {
    const alive = replicas;
    await setFault(sim.url, 'primary', { mode: 'ok' });
    await onEvery(alive, (p) => p.state === 'HALF_OPEN');
    expect(await create(alive[0])).toBe('primary'); // the probe session closes it
    await onEvery(alive, (p) => p.state === 'CLOSED');
    const view = await health(alive[0]);
    const leader = alive.find((r) => view.leader?.includes(`:${r.process.child.pid}:`))!;
    const survivor = alive.find((r) => r !== leader)!;
    await setFault(sim.url, 'primary', { mode: 'down' });
    for (const on of [leader, survivor, leader, survivor]) expect(await create(on)).toBe('failover');
    // Every replica counts the cluster's outcomes, though only the leader decides.
    await onEvery(alive, (p) => p.state === 'CLOSED' && p.consecutiveFailures === 4);
    leader.process.child.kill('SIGKILL');
    await leader.process.exited;
    replicas = replicas.filter((r) => r !== leader);
    await eventually(async () => (await health(survivor)).leader === (await health(survivor)).replica, 600, 100);
    expect(await primaryOn(survivor)).toMatchObject({ state: 'CLOSED', consecutiveFailures: 4 });
    expect(await create(survivor)).toBe('failover');
    await onEvery([survivor], (p) => p.state === 'OPEN');
  }, 120_000);
});
