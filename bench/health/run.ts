/**
 * `GET /v1/health/cpaas` requests per second against `GET /health` (liveness: a constant body, the
 * cheapest route of the same app) in the same run, on the same broker process, with autocannon.
 *
 * The broker is the built one (`dist/apps/broker/src/main.js`, a process of its own) on a throwaway
 * PostgreSQL, with the simulator as its two providers and the scheduled health probes pushed out of
 * the way, so neither route shares the process with background work. Rounds alternate which route
 * goes first; the ratio is the median of the per-round ratios (each round's two runs are adjacent in
 * time, so the machine's slow drifts cancel); other figures are medians of rounds. Prints one JSON object.
 * Usage: npm run bench:health [-- --connections=16 --amount=3000 --rounds=21]
 */
import { cpus } from 'node:os';
import { load, type LoadResult } from '../support/load';
import { startBrokerProcess, startDatabase, startSimulatorProcess } from '../support/stack';
import { median, numberArg, ratio, round } from '../support/stats';
import { runBench } from '../support/started';

const CONNECTIONS = numberArg('connections', 16);
const AMOUNT = numberArg('amount', 3000);
const ROUNDS = numberArg('rounds', 21);
const WARMUP = numberArg('warmup', 2000);

async function hit(url: string, path: string, amount: number): Promise<LoadResult> {
  const result = await load({ url, path, connections: CONNECTIONS, amount });
  if (result.errors > 0 || result.statuses['200'] !== amount) {
    throw new Error(`${path}: expected ${amount} × 200, got ${JSON.stringify(result.statuses)} and ${result.errors} errors`);
  }
  return result;
}

async function main(): Promise<void> {
  const db = await startDatabase('bench_health', { external: process.env.DATABASE_URL });
  const sim = await startSimulatorProcess();
  const broker = await startBrokerProcess(db.url, sim.url, {
    BREAKER_HEALTH_INTERVAL_MS: '3600000',
    SESSION_SWEEP_INTERVAL_MS: '3600000',
    RELAY_RETRY_INTERVAL_MS: '3600000',
  });
  try {
    await hit(broker.url, '/health', WARMUP);
    await hit(broker.url, '/v1/health/cpaas', WARMUP);
    const liveness: LoadResult[] = [];
    const cpaas: LoadResult[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? (['/health', '/v1/health/cpaas'] as const) : (['/v1/health/cpaas', '/health'] as const);
      for (const path of order) (path === '/health' ? liveness : cpaas).push(await hit(broker.url, path, AMOUNT));
    }
    const summary = (runs: LoadResult[]) => ({
      requestsPerSecond: round(median(runs.map((r) => r.perSecond))),
      p50Ms: round(median(runs.map((r) => r.p50)), 2),
      p99Ms: round(median(runs.map((r) => r.p99)), 2),
      rounds: runs.map((r) => round(r.perSecond)),
    });
    const perRound = cpaas.map((r, i) => ratio(r.perSecond, liveness[i].perSecond));
    // Each round's two runs sit side by side in time: their ratio cancels the machine's slow drifts.
    const headline = median(perRound);
    console.log(
      JSON.stringify(
        {
          benchmark: 'health',
          connections: CONNECTIONS,
          requestsPerRound: AMOUNT,
          rounds: ROUNDS,
          cpaasHealth: summary(cpaas),
          liveness: summary(liveness),
          ratio: headline,
          ratioOfMedians: ratio(median(cpaas.map((r) => r.perSecond)), median(liveness.map((r) => r.perSecond))),
          ratioPerRound: perRound,
          target: 0.9,
          targetMet: headline >= 0.9,
          postgres: db.describe,
          node: process.version,
          cpus: cpus().length,
        },
        null,
        2,
      ),
    );
  } finally {
    await broker.stop();
    await sim.stop();
    await db.drop();
  }
}

runBench(main);
