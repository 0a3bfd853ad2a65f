/**
 * One breaker for three replicas (issue #13, docs/operations.md), in one run on one database and one simulator
 * (separate processes, as `npm start` runs them; `npm run build` first):
 *
 * - `tripDelay`: the delay from the 5th consecutive failure, seen by replica B, to the primary OPEN on
 *   replica C. Per trial: 4 failures through A (the leader) and C are counted by the leader first; then
 *   one create on B fails at the primary; the clock starts when B's answer arrives (its outcome is
 *   recorded then) and stops when C's GET /v1/health/cpaas, polled every `--pollMs`, says OPEN. The
 *   path: B's batch NOTIFY → A trips, persists, NOTIFY → C reads and adopts. The primary then recovers
 *   through the health checks (shortened interval) before the next trial.
 * - `creates`: sessions created per second through one replica, then through three (the same total
 *   connections spread over them), primary healthy, for `--seconds` each.
 *
 * Prints one JSON object. Usage: npm run bench:cluster [-- --trials=N --seconds=N --connections=N --pollMs=N]
 */
import { load, type LoadResult } from '../support/load';
import {
  BENCH_API_KEY,
  setFault,
  startBrokerProcess,
  startDatabase,
  startSimulatorProcess,
  waitFor,
  type BrokerProcess,
} from '../support/stack';
import { median, numberArg, nowMs, percentile, round } from '../support/stats';
import { runBench } from '../support/started';

const TRIALS = numberArg('trials', 30);
const SECONDS = numberArg('seconds', 10);
const CONNECTIONS = numberArg('connections', 12);
const POLL_MS = numberArg('pollMs', 5);
const INTERVAL_MS = 500;

let counter = 0;
function body(): string {
  counter += 1;
  const base = 2348100000000 + counter * 2;
  return JSON.stringify({ channel: 'sms', participants: [{ number: `+${base}` }, { number: `+${base + 1}` }] });
}

const auth = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };

async function create(on: BrokerProcess): Promise<{ status: number; provider?: string }> {
  const res = await fetch(`${on.url}/v1/sessions`, { method: 'POST', headers: auth, body: body() });
  const json = (await res.json()) as { provider?: string };
  return { status: res.status, provider: json.provider };
}

async function primary(on: BrokerProcess): Promise<{ state: string; consecutiveFailures: number; scope: string }> {
  const res = await fetch(`${on.url}/v1/health/cpaas`);
  const json = (await res.json()) as { providers: Array<{ name: string; state: string; consecutiveFailures: number; scope: string }> };
  return json.providers.find((p) => p.name === 'primary')!;
}

/** Waits for the primary CLOSED on every replica, creating a session (a probe once HALF_OPEN) on the first at each look. */
async function closedEverywhere(replicas: BrokerProcess[]): Promise<void> {
  await waitFor(
    'primary CLOSED everywhere',
    async () => {
      const states = await Promise.all(replicas.map(primary));
      if (states[0].state === 'HALF_OPEN') await create(replicas[0]);
      return states.every((p) => p.state === 'CLOSED');
    },
    600,
    50,
  );
}

async function main(): Promise<void> {
  const db = await startDatabase('cluster_bench', { external: process.env.DATABASE_URL });
  const sim = await startSimulatorProcess();
  const env = {
    BREAKER_HEALTH_INTERVAL_MS: String(INTERVAL_MS),
    // The primary recovers in 5 checks and one create: 5 passes, then its first probe session closes it
    // (health checks alone never close a breaker).
    BREAKER_CLOSE_AFTER_MS: '0',
    BREAKER_CLOSE_MIN_PROBES: '1',
    BREAKER_HALF_OPEN_PROBE_SHARE: '1',
    DATABASE_POOL_SIZE: '8',
  };
  const replicas: BrokerProcess[] = [];
  try {
    const a = await startBrokerProcess(db.url, sim.url, env); // started first: the leader
    replicas.push(a);
    replicas.push(...(await Promise.all([startBrokerProcess(db.url, sim.url, env), startBrokerProcess(db.url, sim.url, env)])));
    const [, b, c] = replicas;
    await waitFor('one leader, every replica in the cluster', async () =>
      (await Promise.all(replicas.map(primary))).every((p) => p.scope === 'cluster'),
    );

    const delays: number[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      await setFault(sim.url, 'primary', { mode: 'ok' });
      await closedEverywhere(replicas);
      await setFault(sim.url, 'primary', { mode: 'down' });
      for (const on of [a, c, a, c]) await create(on);
      await waitFor('4 failures at the leader', async () => (await primary(a)).consecutiveFailures === 4, 600, 5);
      const fifth = await create(b);
      const started = nowMs();
      if (fifth.provider !== 'failover') throw new Error(`the 5th create went to ${fifth.provider ?? fifth.status}`);
      await waitFor('OPEN on C', async () => (await primary(c)).state === 'OPEN', 2_000, POLL_MS);
      delays.push(nowMs() - started);
    }
    await setFault(sim.url, 'primary', { mode: 'ok' });
    await closedEverywhere(replicas);

    const run = (targets: BrokerProcess[]): Promise<LoadResult[]> =>
      Promise.all(
        targets.map((target) =>
          load({
            url: target.url,
            path: '/v1/sessions',
            method: 'POST',
            headers: auth,
            body,
            connections: Math.max(1, Math.round(CONNECTIONS / targets.length)),
            durationSeconds: SECONDS,
          }),
        ),
      );
    const summary = (results: LoadResult[]) => ({
      perSecond: round(results.reduce((sum, r) => sum + r.perSecond, 0)),
      p50Ms: round(median(results.map((r) => r.p50))),
      p99Ms: round(Math.max(...results.map((r) => r.p99))),
      statuses: results.reduce<Record<string, number>>((all, r) => {
        for (const [status, n] of Object.entries(r.statuses)) all[status] = (all[status] ?? 0) + n;
        return all;
      }, {}),
    });
    const one = summary(await run([a]));
    const three = summary(await run(replicas));

    console.log(
      JSON.stringify(
        {
          bench: 'cluster',
          database: db.describe,
          healthIntervalMs: INTERVAL_MS,
          tripDelayBtoC: {
            trials: delays.length,
            pollMs: POLL_MS,
            p50Ms: round(percentile(delays, 50)),
            p99Ms: round(percentile(delays, 99)),
            maxMs: round(Math.max(...delays)),
          },
          creates: { connections: CONNECTIONS, seconds: SECONDS, oneReplica: one, threeReplicas: three },
        },
        null,
        2,
      ),
    );
  } finally {
    for (const r of replicas) await r.stop();
    await sim.stop();
    await db.drop();
  }
}

runBench(main);
