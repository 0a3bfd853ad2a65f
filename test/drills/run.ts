/**
 * The longer fault drills, beyond what `npm test` runs (test/drills.e2e-spec.ts): the same faults,
 * repeated, on the built broker and simulator as processes of their own, on a throwaway PostgreSQL.
 * Prints one JSON object; exits non-zero when a check fails.
 *
 *   crash     kill -9 of the broker under load, `--cycles` times, each followed by a restart; then
 *             a create stalled in the provider's bind (simulator latency) killed with kill -9, twice:
 *             once while the bind is still waiting, once after the activation committed but before
 *             its answer was kept (a lock held on its idempotency record stalls the write); after the
 *             restart a retry with the same Idempotency-Key must answer 201 within the takeover lease
 *             (PROVIDER_CALL_TIMEOUT_MS × (providers + 1) + 5 s), with the same session when it had
 *             been activated; then waits for the sweeper to drop the reservations the killed
 *             processes left pending (PROVIDER_CALL_TIMEOUT_MS × (providers + 1) + 60 s after they
 *             were made): none may be left.
 *   postgres  PostgreSQL stopped and started under load, `--cycles` times, with two brokers on it;
 *             after each, a breaker trip on one broker must still reach the other (LISTEN/NOTIFY).
 *   replicas  three brokers on one PostgreSQL, `--requests` overlapping creates and closes.
 *   database-failover  two brokers on a Patroni cluster behind HAProxy (deploy/ha), its leader killed under
 *             load: the postmaster, then the whole node (test/drills/database-failover.ts says what it checks).
 *
 * Checks in every drill: every session answered 201 (and not closed) is in the database, active; the
 * pool rule holds, seen from the database and from the answers; no answer other than those expected.
 * Usage: npm run drill:crash | drill:postgres | drill:replicas [-- --cycles=5 --requests=3000] | drill:database-failover
 */
import { clientSideClashes, overlappingPairs, startCreateLoop, type CreateRecord } from './create-loop';
import { checkPoolRule, missingSessions, withClient } from '../../bench/support/pool-rule';
import {
  BENCH_API_KEY,
  setFault,
  sleep,
  startBrokerProcess,
  startDatabase,
  startSimulatorProcess,
  waitFor,
  type BenchDatabase,
  type BrokerProcess,
  type SimulatorProcess,
} from '../../bench/support/stack';
import { numberArg } from '../../bench/support/stats';
import { killedInBind, killedInBindOk } from './killed-in-bind';
import { databaseFailoverDrill } from './database-failover';

const SCENARIO = process.argv[2];
const CYCLES = numberArg('cycles', SCENARIO === 'crash' ? 5 : 3);
const REQUESTS = numberArg('requests', 3000);
const ENV = { LOG_LEVEL: 'warn', SIM_SEED_NUMBERS: '5', PROVIDER_CALL_TIMEOUT_MS: '1000', SESSION_SWEEP_INTERVAL_MS: '2000' };

function counts(records: CreateRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) {
    const key = r.status === 0 ? 'no answer' : r.problemType ? `${r.status} ${r.problemType}` : String(r.status);
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

async function common(db: BenchDatabase, records: CreateRecord[]) {
  const open = records.filter((r) => r.status === 201 && !r.closed);
  const missing = await missingSessions(
    db.url,
    open.map((r) => r.id!),
  );
  const poolRule = await checkPoolRule(db.url);
  const clashes = clientSideClashes(records);
  return {
    answers: counts(records),
    created: records.filter((r) => r.status === 201).length,
    lost: missing.length,
    poolRule,
    clientSideClashes: clashes.length,
    ok: missing.length === 0 && poolRule.violations === 0 && poolRule.unguarded === 0 && clashes.length === 0,
  };
}

/** The errors a broker logged for its 5xx answers: what went wrong, for the report. */
function serverErrors(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.includes('unhandled error'))
    .map((line) => {
      try {
        const entry = JSON.parse(line) as { err?: { type?: string; message?: string; code?: string } };
        return `${entry.err?.type ?? ''} ${entry.err?.code ?? ''} ${entry.err?.message ?? ''}`.trim();
      } catch {
        return line.slice(0, 300);
      }
    });
}

async function pending(db: BenchDatabase): Promise<number> {
  return withClient(
    db.url,
    async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE status = 'pending'`)).rows[0].n,
  );
}

async function crash(db: BenchDatabase, sim: SimulatorProcess): Promise<Record<string, unknown>> {
  let broker = await startBrokerProcess(db.url, sim.url, ENV);
  const port = broker.port;
  const loop = startCreateLoop({
    brokers: () => [`http://127.0.0.1:${port}`],
    workers: 8,
    pair: overlappingPairs(80, 5),
    maxRequests: 100_000,
  });
  const logs: string[] = [];
  try {
    for (let i = 0; i < CYCLES; i++) {
      await loop.createdAtLeast(loop.created().length + 60);
      await broker.kill9();
      logs.push(broker.output());
      broker = await startBrokerProcess(db.url, sim.url, ENV, { port });
    }
    await loop.createdAtLeast(loop.created().length + 60);
  } finally {
    await loop.stop();
  }
  logs.push(broker.output());
  await broker.stop();
  const bindCases = [
    await killedInBind({ db, sim, port, env: ENV, stage: 'in-bind', n: 1 }),
    await killedInBind({ db, sim, port, env: ENV, stage: 'activated-unanswered', n: 2 }),
  ];
  broker = await startBrokerProcess(db.url, sim.url, ENV, { port });
  const leftPending = await pending(db);
  // The sweeper drops what the killed processes left pending, once no create can still own it.
  await waitFor('stale reservations dropped', async () => (await pending(db)) === 0, 120, 1000);
  const output = broker.output();
  await broker.stop();
  const dropped = output.split('\n').filter((l) => l.includes('dropped reservation'));
  const namedDrops = dropped.filter((l) => /dropped reservation [0-9a-f-]{36} \((primary|failover) /.test(l)).length;
  const result = await common(db, loop.records);
  return {
    scenario: 'crash',
    cycles: CYCLES,
    ...result,
    pendingLeftByKills: leftPending,
    pendingAfterSweep: await pending(db),
    dropLogLines: dropped.length,
    dropLogLinesNamingTheReservation: namedDrops,
    killedInBind: bindCases,
    ok: result.ok && dropped.length === namedDrops && (await pending(db)) === 0 && bindCases.every(killedInBindOk),
  };
}

async function primaryState(broker: BrokerProcess): Promise<string> {
  const body = (await (await fetch(`${broker.url}/v1/health/cpaas`)).json()) as { providers: Array<{ name: string; state: string }> };
  return body.providers.find((p) => p.name === 'primary')!.state;
}

async function postgres(db: BenchDatabase, sim: SimulatorProcess): Promise<Record<string, unknown>> {
  // Probes every 100 ms, so a breaker opened in one cycle is closed again before the next.
  const env = { ...ENV, BREAKER_HEALTH_INTERVAL_MS: '100', BREAKER_CLOSE_AFTER_MS: '300', BREAKER_CLOSE_MIN_PROBES: '3' };
  const brokers = [await startBrokerProcess(db.url, sim.url, env), await startBrokerProcess(db.url, sim.url, env)];
  const loop = startCreateLoop({
    brokers: () => brokers.map((b) => b.url),
    workers: 6,
    pair: overlappingPairs(400, 9),
    maxRequests: 100_000,
    pauseMs: 10,
  });
  const cycles: Array<Record<string, unknown>> = [];
  try {
    for (let i = 0; i < CYCLES; i++) {
      await loop.createdAtLeast(loop.created().length + 60);
      const outageFrom = loop.records.length;
      await db.stopServer();
      await waitFor('ready 503', async () => (await fetch(`${brokers[0].url}/health/ready`)).status === 503, 100, 100);
      await sleep(2000);
      await db.restartServer();
      await waitFor('ready 200', async () => (await fetch(`${brokers[0].url}/health/ready`)).status === 200, 300, 100);
      const outage = loop.records.slice(outageFrom);
      // Breaker state still travels between the replicas after the database came back.
      await setFault(sim.url, 'primary', { mode: 'down' });
      for (let j = 0; j < 8 && (await primaryState(brokers[0])) !== 'OPEN'; j++) {
        await fetch(`${brokers[0].url}/v1/sessions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            channel: 'sms',
            participants: [
              { number: `+2348031${String(i % 100).padStart(2, '0')}${j}001` },
              { number: `+2348031${String(i % 100).padStart(2, '0')}${j}002` },
            ],
          }),
        });
      }
      let otherSawOpen = true;
      try {
        await waitFor('OPEN reaches the other broker', async () => (await primaryState(brokers[1])) === 'OPEN', 50, 100);
      } catch {
        otherSawOpen = false;
      }
      await setFault(sim.url, 'primary', { mode: 'ok' });
      await waitFor('CLOSED again', async () => (await primaryState(brokers[0])) === 'CLOSED', 300, 100);
      cycles.push({
        answersDuringOutage: counts(outage.filter((r) => r.status !== 201)),
        brokersStillRunning: brokers.every((b) => b.running()),
        breakerSyncAfterRestart: otherSawOpen,
      });
    }
    await loop.createdAtLeast(loop.created().length + 60);
  } finally {
    await loop.stop();
    for (const b of brokers) await b.stop();
  }
  const errors = [...new Set(brokers.flatMap((b) => serverErrors(b.output())))];
  const result = await common(db, loop.records);
  const notProblem = loop.records.filter(
    (r) => r.status !== 201 && (r.status === 0 || !r.contentType?.startsWith('application/problem+json')),
  );
  return {
    scenario: 'postgres',
    cycles,
    ...result,
    failuresNotProblemJson: notProblem.length,
    serverErrorKinds: errors,
    ok:
      result.ok &&
      notProblem.length === 0 &&
      cycles.every((c) => c.brokersStillRunning === true) &&
      cycles.every((c) => c.breakerSyncAfterRestart === true),
  };
}

async function replicas(db: BenchDatabase, sim: SimulatorProcess): Promise<Record<string, unknown>> {
  const brokers = await Promise.all([0, 1, 2].map(() => startBrokerProcess(db.url, sim.url, { ...ENV, SIM_SEED_NUMBERS: '3' })));
  const loop = startCreateLoop({
    brokers: () => brokers.map((b) => b.url),
    workers: 24,
    pair: overlappingPairs(24, 13),
    maxRequests: REQUESTS,
    closeShare: 0.75,
  });
  await loop.finished;
  for (const b of brokers) await b.stop();
  const result = await common(db, loop.records);
  const unexpected = loop.records.filter((r) => r.status !== 201 && r.problemType !== '/problems/pool-exhausted').length;
  const errors = brokers.flatMap((b) => serverErrors(b.output()));
  return {
    scenario: 'replicas',
    requests: REQUESTS,
    ...result,
    unexpectedAnswers: unexpected,
    serverErrors: errors,
    ok: result.ok && unexpected === 0,
  };
}

async function main(): Promise<void> {
  if (SCENARIO === 'database-failover') {
    // Its own PostgreSQL: a Patroni cluster behind HAProxy (test/drills/database-failover.ts). Stopped by a
    // signal, it exits so that the cluster's exit hook kills what it started (a signal's default skips it).
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
    const result = await databaseFailoverDrill();
    console.log(JSON.stringify({ ...result, node: process.version }, null, 2));
    if (!result.ok) process.exitCode = 1;
    return;
  }
  const drills: Record<string, (db: BenchDatabase, sim: SimulatorProcess) => Promise<Record<string, unknown>>> = {
    crash,
    postgres,
    replicas,
  };
  const drill = drills[SCENARIO];
  if (!drill) throw new Error(`usage: run.js ${Object.keys(drills).join(' | ')} | database-failover [--cycles=N] [--requests=N]`);
  const db = await startDatabase(`drill_${SCENARIO}`);
  const sim = await startSimulatorProcess();
  try {
    const result = await drill(db, sim);
    console.log(JSON.stringify({ drill: SCENARIO, ...result, postgres: db.describe, node: process.version }, null, 2));
    if (!result.ok) process.exitCode = 1;
  } finally {
    await sim.stop();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
