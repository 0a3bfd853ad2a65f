/**
 * What a burst after quiet pays for, process by process (issue #19's burst-after-30 s line): the stack as
 * `bench:sessions` runs it (PostgreSQL with the bench's log settings, the simulator and the broker as
 * processes of their own, this process as the load generator), a warm-up at the maximum rate and 10 s at
 * `--rate`, then the same bursts as `bench:sessions` (`--quiets=1,30,1,30`, `--burst-seconds=4` at `--rate`).
 * For each burst's first second: its p99, and every process's collections in it (the broker and the simulator
 * through tail-sampler.ts in `gc` mode, this process through its own observer), and PostgreSQL's autovacuum
 * runs in the quiet before it (they invalidate every backend's cached plans).
 *
 * `--sim-flags=off,on` runs the sequence once per value, alternating over `--rounds`: the simulator with V8's
 * defaults or with the broker's runtime flags (apps/broker/src/runtime-flags.ts).
 * Usage: node dist/bench/bench/support/burst-probe.js [--rate=130 --rounds=1 --sim-flags=off,on --quiets=1,30,1,30]
 */
import { readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { load, paced, type PacedResult } from './load';
import { parseServerLog, postgresLogSettings, readServerLog } from './postgres-log';
import { resetSessions } from './pool-rule';
import { BENCH_API_KEY, sleep, startBrokerProcess, startDatabase, startSimulatorProcess } from './stack';
import { median, numberArg, percentile, round } from './stats';

const RATE = numberArg('rate', 130);
const ROUNDS = numberArg('rounds', 1);
const BURST_SECONDS = numberArg('burst-seconds', 4);
const QUIETS_MS = (process.argv.find((a) => a.startsWith('--quiets='))?.slice(9) ?? '1,30,1,30').split(',').map((q) => Number(q) * 1000);
const SIM_FLAGS = (process.argv.find((a) => a.startsWith('--sim-flags='))?.slice(12) ?? 'off').split(',');
const SAMPLER = resolve(__dirname, 'tail-sampler.js');
const HEADERS = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };

let participantSeq = 0;
function createBody(): string {
  participantSeq += 1;
  const n = participantSeq * 2 + 6_000_000;
  return JSON.stringify({
    channel: 'sms',
    participants: [{ number: `+234803${String(n).padStart(7, '0')}` }, { number: `+234803${String(n + 1).padStart(7, '0')}` }],
  });
}

type Gc = [number, number, number];
const ownGc: Gc[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    ownGc.push([performance.timeOrigin + e.startTime, e.duration, (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0]);
}).observe({ entryTypes: ['gc'] });

const gcIn = (gcs: Gc[], t0: number, t1: number) => {
  const inside = gcs.filter(([at]) => at >= t0 && at < t1);
  return {
    count: inside.length,
    ms: round(
      inside.reduce((a, [, d]) => a + d, 0),
      1,
    ),
    longestMs: round(Math.max(0, ...inside.map(([, d]) => d)), 1),
    // perf_hooks kinds: 1 scavenge, 4 mark-compact, 8 incremental marking
    oldGeneration: inside.filter(([, , kind]) => kind === 4).length,
  };
};

async function sequence(simFlags: boolean) {
  const db = await startDatabase('bench_burst', { settings: postgresLogSettings(50) });
  const tag = `${process.pid}-${Date.now()}`;
  const simFile = join(tmpdir(), `burst-sim-${tag}.json`);
  const brokerFile = join(tmpdir(), `burst-broker-${tag}.json`);
  const sim = await startSimulatorProcess(undefined, {
    nodeArgs: ['--require', SAMPLER],
    v8Defaults: !simFlags,
    env: { TAIL_SAMPLER: 'gc', TAIL_SAMPLER_FILE: simFile },
  });
  const broker = await startBrokerProcess(
    db.url,
    sim.url,
    {
      SIM_SEED_NUMBERS: '100',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      TAIL_SAMPLER: 'gc',
      TAIL_SAMPLER_FILE: brokerFile,
    },
    { nodeArgs: ['--require', SAMPLER] },
  );
  const bursts: Array<{ quietMs: number; start: number; results: PacedResult[] }> = [];
  try {
    const creates = { url: broker.url, path: '/v1/sessions', method: 'POST' as const, headers: HEADERS, body: createBody };
    await resetSessions(db.url);
    await load({ ...creates, connections: 16, amount: 3000 });
    await resetSessions(db.url);
    await paced({ ...creates, rate: RATE, amount: RATE * 10 });
    for (const quietMs of QUIETS_MS) {
      await sleep(quietMs);
      const start = performance.timeOrigin + performance.now();
      const results = await paced({ ...creates, rate: RATE, amount: RATE * BURST_SECONDS });
      if (results.some((r) => r.status !== 201)) throw new Error(`burst after ${quietMs} ms: a create did not answer 201`);
      bursts.push({ quietMs, start, results });
    }
  } finally {
    await broker.stop();
    await sim.stop();
  }
  const brokerGc = (JSON.parse(readFileSync(brokerFile, 'utf8')) as { gc: Gc[] }).gc;
  const simGc = (JSON.parse(readFileSync(simFile, 'utf8')) as { gc: Gc[] }).gc;
  const log = parseServerLog(db.server ? await readServerLog(db.server.clusterDir) : '');
  await db.drop();
  return bursts.map(({ quietMs, start, results }, i) => {
    const first = results.filter((r) => r.sentAt + performance.timeOrigin - start < 1000).map((r) => r.latencyMs);
    const quietStart = i === 0 ? start - quietMs : bursts[i - 1].start + BURST_SECONDS * 1000;
    return {
      simFlags,
      quietS: quietMs / 1000,
      firstSecondP99Ms: round(percentile(first, 99), 1),
      firstSecondP50Ms: round(percentile(first, 50), 1),
      p99Ms: round(
        percentile(
          results.map((r) => r.latencyMs),
          99,
        ),
        1,
      ),
      lateMsMax: round(Math.max(...results.map((r) => r.lateMs)), 1),
      firstSecondGc: {
        broker: gcIn(brokerGc, start, start + 1000),
        simulator: gcIn(simGc, start, start + 1000),
        loadGenerator: gcIn(ownGc, start, start + 1000),
      },
      autovacuumsInQuietBefore: log.autovacuums.filter((a) => a.atMs >= quietStart && a.atMs < start).map((a) => a.detail.slice(10, 70)),
      autovacuumsInFirstSecond: log.autovacuums.filter((a) => a.atMs >= start && a.atMs < start + 1000).length,
    };
  });
}

async function main(): Promise<void> {
  const load0 = loadavg();
  const out: Awaited<ReturnType<typeof sequence>> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? SIM_FLAGS : [...SIM_FLAGS].reverse();
    for (const flags of order) out.push(...(await sequence(flags === 'on')));
  }
  const ratio = (flags: boolean) => {
    const of = (q: number) => median(out.filter((b) => b.simFlags === flags && b.quietS === q).map((b) => b.firstSecondP99Ms));
    return round(of(30) / of(1), 2);
  };
  console.log(
    JSON.stringify(
      {
        benchmark: 'burst-probe',
        rate: RATE,
        firstSecondP99After30sVs1s: Object.fromEntries(SIM_FLAGS.map((f) => [`simFlags ${f}`, ratio(f === 'on')])),
        bursts: out,
        load: { start: load0, end: loadavg() },
      },
      null,
      2,
    ),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
