/**
 * What the slowest 1 % of creates paced at half the maximum rate wait on (issue #19's half-rate tail).
 *
 * One PostgreSQL, one simulator (processes of their own, as in `bench:sessions`), and per variant a broker
 * started with `--require tail-sampler.js` (bench/support/tail-sampler.ts: loop gaps, GC, and per request
 * its arrival, pool waits, statements and the provider's bind, all with epoch timestamps). Each variant:
 * a warm-up, a max-rate phase (autocannon, `--connections`, `--amount` creates: creates/s), then creates
 * paced evenly at `--rate` (default half the first variant's max) for `--seconds`, each with an
 * `x-tail-seq` header. While it runs, every 50 ms: the run-queue wait (`/proc/<pid>/task/<tid>/schedstat`,
 * nanoseconds spent runnable but not running) of the broker, the simulator, PostgreSQL's processes (autovacuum
 * workers apart, re-listed every tick) and this load generator, and `/proc/pressure/cpu` (machine-wide). Waits do
 * not depend on how fast the CPU is; they say who was kept off the cores. PostgreSQL runs with the bench's log
 * settings; each slow request is matched with the autovacuum runs (their elapsed time from the log), checkpoints
 * and slow statements overlapping it, and with how late the load generator sent it (`lateMs`).
 *
 * Variants (`--variants=this,pool=8,against,env:NAME=VALUE,sql:avoff`, tokens joined by `+`, see `parseVariant`;
 * `--pools=20,8` is `--variants=pool=20,pool=8`), in rounds `--rounds` with the order alternating.
 * `--pulse=analyze|vacuum`: a statement of the probe's own beside the load, against a `SELECT 1` control (`PULSES`).
 * Usage: node dist/bench/bench/support/tail-probe.js [--variants=this,against --against=DIR --rounds=2 --seconds=20 --rate=N --wait-quiet=300 --tick-ms=20]
 * `--gc-only`: the broker records only its collections (no 1 ms timer, no per-request records), close to the broker as it runs.
 * Prints one JSON object; `--raw=FILE` also writes every slow request's record there.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BENCH_API_KEY, startBrokerProcess, startDatabase, startSimulatorProcess, type BenchDatabase, type BrokerProcess } from './stack';
import { Client } from 'pg';
import { parseServerLog, postgresLogSettings, readServerLog } from './postgres-log';
import { load, paced, type PacedResult } from './load';
import { machineCpu, postgresCpuMs, processCpuMs, parentPid } from './cpu';
import { resetSessions, withClient } from './pool-rule';
import { mean, median, numberArg, percentile, round } from './stats';

const CONNECTIONS = numberArg('connections', 16);
const AMOUNT = numberArg('amount', 3000);
const SECONDS = numberArg('seconds', 20);
const ROUNDS = numberArg('rounds', 1);
const RATE = numberArg('rate', 0);
const POOLS = process.argv.find((a) => a.startsWith('--pools='))?.slice(8);
/** `--variants=this,against` (see `parseVariant`); `--pools=20,8` is `--variants=pool=20,pool=8`. */
const VARIANTS = (
  process.argv.find((a) => a.startsWith('--variants='))?.slice(11) ??
  (POOLS
    ? POOLS.split(',')
        .map((p) => `pool=${p}`)
        .join(',')
    : 'this')
).split(',');
const AGAINST = process.argv.find((a) => a.startsWith('--against='))?.slice(10);
const SLOW_STATEMENT_MS = numberArg('slow-statement-ms', 50);
/**
 * `--pulse=analyze`: during the paced phase, every `--pulse-every-ms` (2500) a client of the probe's own runs, in
 * turn, the pulse (what autovacuum's analyze does to the hot tables) and a control `SELECT 1`; the requests sent in
 * the `--pulse-window-ms` (400) after each are compared, with the stack's CPU meanwhile.
 */
const PULSES: Record<string, string> = {
  analyze: 'ANALYZE sessions, session_participants, webhook_events',
  vacuum: 'VACUUM sessions, session_participants, webhook_events',
};
const PULSE = process.argv.find((a) => a.startsWith('--pulse='))?.slice(8);
if (PULSE && !PULSES[PULSE]) throw new Error(`--pulse: one of ${Object.keys(PULSES).join(', ')}`);
const PULSE_EVERY_MS = numberArg('pulse-every-ms', 2500);
const PULSE_WINDOW_MS = numberArg('pulse-window-ms', 400);
const TICK_MS = numberArg('tick-ms', 20);
/** Before each paced phase, wait (at most 240 s) until the rest of the machine used less than this many CPU ms per second. */
const WAIT_QUIET = numberArg('wait-quiet', 0);
const RAW = process.argv.find((a) => a.startsWith('--raw='))?.slice(6);
const SAMPLER = resolve(__dirname, 'tail-sampler.js');
const HEADERS = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };

let participantSeq = 0;
function createBody(): string {
  participantSeq += 1;
  const n = participantSeq * 2 + 5_000_000;
  return JSON.stringify({
    channel: 'sms',
    participants: [{ number: `+234803${String(n).padStart(7, '0')}` }, { number: `+234803${String(n + 1).padStart(7, '0')}` }],
  });
}

const epoch = (): number => performance.timeOrigin + performance.now();

/** Run-queue wait (ns) and run time (ns) summed over a process's threads; pids of a process group. */
function schedstat(pids: number[], mainThreadOnly = false): { runNs: number; waitNs: number } {
  let runNs = 0;
  let waitNs = 0;
  for (const pid of pids) {
    let tids: string[] = [];
    try {
      tids = mainThreadOnly ? [String(pid)] : readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        runNs += run;
        waitNs += wait;
      } catch {
        // the thread ended
      }
    }
  }
  return { runNs, waitNs };
}

function postgresPids(postmaster: number): number[] {
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return parentPid(pid) === postmaster;
      } catch {
        return false;
      }
    });
  return [postmaster, ...children];
}

type RunWait = { runNs: number; waitNs: number };

/**
 * PostgreSQL's processes re-listed at every reading (autovacuum workers come and go; a list taken before
 * the phase misses them and their CPU would count as the rest of the machine's): run and run-queue wait
 * summed per kind since the first reading, `autovacuum` (its workers) apart from the rest.
 */
class PostgresSched {
  private readonly kinds = new Map<number, 'autovacuum' | 'postgres'>();
  private readonly postmasterTitle: string;
  private readonly last = new Map<number, RunWait>();
  private readonly totals = { postgres: { runNs: 0, waitNs: 0 }, autovacuum: { runNs: 0, waitNs: 0 } };
  private first = true;

  /** `excluded`: a backend of this probe's own (the pulse client), counted apart as `pulse`. */
  constructor(
    private readonly postmaster: number,
    private readonly excluded = -1,
  ) {
    this.postmasterTitle = readFileSync(`/proc/${postmaster}/cmdline`, 'utf8');
  }

  read(): { postgres: RunWait; autovacuum: RunWait; pulse: RunWait } {
    let children: number[];
    try {
      children = readFileSync(`/proc/${this.postmaster}/task/${this.postmaster}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number);
    } catch {
      children = postgresPids(this.postmaster).slice(1);
    }
    const now = new Map<number, RunWait>();
    for (const pid of [this.postmaster, ...children]) {
      if (pid === this.excluded) continue;
      let kind = this.kinds.get(pid);
      if (!kind) {
        let title: string;
        try {
          title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          continue;
        }
        kind = title.includes('autovacuum worker') ? 'autovacuum' : 'postgres';
        // A process just forked still has the postmaster's title: look again at the next reading.
        if (title !== this.postmasterTitle) this.kinds.set(pid, kind);
      }
      const s = schedstat([pid]);
      const before = this.last.get(pid) ?? (this.first ? s : { runNs: 0, waitNs: 0 });
      this.totals[kind].runNs += s.runNs - before.runNs;
      this.totals[kind].waitNs += s.waitNs - before.waitNs;
      now.set(pid, s);
    }
    this.last.clear();
    for (const [pid, s] of now) this.last.set(pid, s);
    for (const pid of this.kinds.keys()) if (!now.has(pid)) this.kinds.delete(pid);
    this.first = false;
    return {
      postgres: { ...this.totals.postgres },
      autovacuum: { ...this.totals.autovacuum },
      pulse: this.excluded > 0 ? schedstat([this.excluded]) : { runNs: 0, waitNs: 0 },
    };
  }
}

function pressureTotalUs(): number {
  try {
    return Number(/some .* total=(\d+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** Waits until the machine less `ours` used under WAIT_QUIET CPU ms per second over 2 s (at most 240 s); returns the seconds waited. */
async function waitQuiet(ours: number[]): Promise<number> {
  const started = Date.now();
  const oursMs = () => ours.reduce((a, pid) => a + processCpuMs(pid), 0);
  while (Date.now() - started < 240_000) {
    const m0 = machineCpu().busyMs;
    const o0 = oursMs();
    await new Promise((done) => setTimeout(done, 2000));
    if ((machineCpu().busyMs - m0 - (oursMs() - o0)) / 2 < WAIT_QUIET) break;
  }
  return Math.round((Date.now() - started) / 1000);
}

/** A create as `paced` reports it, without its body. */
type Sent = Omit<PacedResult, 'body'>;

/** Creates paced evenly at `rate` for `seconds`, each with an `x-tail-seq` header, timed on the epoch clock. */
async function pacedWithSeq(url: string, rate: number, seconds: number): Promise<Sent[]> {
  const results = await paced({
    url,
    path: '/v1/sessions',
    method: 'POST',
    headers: (seq) => ({ ...HEADERS, 'x-tail-seq': String(seq) }),
    body: createBody,
    rate,
    amount: Math.round(rate * seconds),
  });
  return results.map((r) => ({
    seq: r.seq,
    lateMs: r.lateMs,
    sentAt: performance.timeOrigin + r.sentAt,
    endedAt: performance.timeOrigin + r.endedAt,
    latencyMs: r.latencyMs,
    status: r.status,
  }));
}

interface Sampled {
  gaps: Array<[number, number]>;
  gc: Array<[number, number, number]>;
  requests: Array<{
    seq: string;
    url: string;
    arrival: number;
    finish?: number;
    steps: Array<{ kind: string; start: number; ms: number; what: string }>;
  }>;
  queries: Array<[number, number, string]>;
}

type Who = 'broker' | 'brokerMain' | 'simulator' | 'postgres' | 'autovacuum' | 'pulse' | 'loadGenerator';
type Tick = { at: number; pressureUs: number; machine: { busyMs: number; stealMs: number } } & Record<
  Who,
  { runNs: number; waitNs: number }
>;

const overlap = (a0: number, a1: number, b0: number, b1: number): number => Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));

interface PgEvents {
  autovacuums: Array<{ startMs: number; endMs: number; detail: string }>;
  checkpoints: Array<{ startMs: number; endMs: number }>;
  slowStatements: Array<{ startMs: number; endMs: number; statement: string }>;
}

/** A statement the probe ran beside the load (`--pulse`): when, and whether it was the pulse or its control (`SELECT 1`). */
interface Pulse {
  at: number;
  kind: 'pulse' | 'control';
  ms: number;
}

function analyse(sent: Sent[], sampled: Sampled, ticks: Tick[], phase: [number, number], pg: PgEvents, pulses: Pulse[]) {
  const latencies = sent.map((s) => s.latencyMs);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  const bySeq = new Map(sampled.requests.filter((r) => r.url === '/v1/sessions' && r.seq !== '').map((r) => [Number(r.seq), r]));
  const gaps = sampled.gaps.filter(([start]) => start >= phase[0] - 1000 && start <= phase[1]);
  const gcs = sampled.gc.filter(([start]) => start >= phase[0] - 1000 && start <= phase[1]);
  const jobs = sampled.queries.filter(([start]) => start >= phase[0] - 1000 && start <= phase[1]);
  const waitIn = (who: Who, t0: number, t1: number): number => {
    // Run-queue wait (ms) of `who` in the 50 ms ticks overlapping [t0, t1], pro rata.
    let sum = 0;
    for (let i = 1; i < ticks.length; i++) {
      const share = overlap(ticks[i - 1].at, ticks[i].at, t0, t1) / (ticks[i].at - ticks[i - 1].at);
      if (share > 0) sum += (share * (ticks[i][who].waitNs - ticks[i - 1][who].waitNs)) / 1e6;
    }
    return sum;
  };
  const ours: Who[] = ['broker', 'simulator', 'postgres', 'autovacuum', 'pulse', 'loadGenerator'];
  /** CPU (ms) `who` ran in [t0, t1], pro rata over the ticks. */
  const runIn = (who: Who, t0: number, t1: number): number => {
    let sum = 0;
    for (let i = 1; i < ticks.length; i++) {
      const share = overlap(ticks[i - 1].at, ticks[i].at, t0, t1) / (ticks[i].at - ticks[i - 1].at);
      if (share > 0) sum += (share * (ticks[i][who].runNs - ticks[i - 1][who].runNs)) / 1e6;
    }
    return sum;
  };
  const mainIn = (t0: number, t1: number) => {
    let run = 0;
    let wait = 0;
    for (let i = 1; i < ticks.length; i++) {
      const share = overlap(ticks[i - 1].at, ticks[i].at, t0, t1) / (ticks[i].at - ticks[i - 1].at);
      if (share <= 0) continue;
      run += (share * (ticks[i].brokerMain.runNs - ticks[i - 1].brokerMain.runNs)) / 1e6;
      wait += (share * (ticks[i].brokerMain.waitNs - ticks[i - 1].brokerMain.waitNs)) / 1e6;
    }
    return { run, wait };
  };
  /** CPU (ms) the rest of the machine used in [t0, t1]: /proc/stat's busy time less our four processes' run time; and steal. */
  const othersIn = (t0: number, t1: number): { others: number; steal: number } => {
    let others = 0;
    let steal = 0;
    for (let i = 1; i < ticks.length; i++) {
      const share = overlap(ticks[i - 1].at, ticks[i].at, t0, t1) / (ticks[i].at - ticks[i - 1].at);
      if (share <= 0) continue;
      const oursMs = ours.reduce((a, w) => a + (ticks[i][w].runNs - ticks[i - 1][w].runNs) / 1e6, 0);
      others += share * (ticks[i].machine.busyMs - ticks[i - 1].machine.busyMs - oursMs);
      steal += share * (ticks[i].machine.stealMs - ticks[i - 1].machine.stealMs);
    }
    return { others, steal };
  };
  const describe = (s: Sent) => {
    const r = bySeq.get(s.seq);
    const steps = r?.steps ?? [];
    const sum = (kind: string) => steps.filter((x) => x.kind === kind).reduce((a, x) => a + x.ms, 0);
    const inGaps = gaps.reduce((a, [start, ms]) => a + overlap(start, start + ms, s.sentAt, s.endedAt), 0);
    const inGc = gcs.reduce((a, [start, ms]) => a + overlap(start, start + ms, s.sentAt, s.endedAt), 0);
    return {
      seq: s.seq,
      sentAt: round(s.sentAt, 1),
      latencyMs: round(s.latencyMs, 1),
      beforeArrivalMs: r ? round(r.arrival - s.sentAt, 2) : null,
      inBrokerMs: r?.finish ? round(r.finish - r.arrival, 2) : null,
      afterFinishMs: r?.finish ? round(s.endedAt - r.finish, 2) : null,
      poolWaitMs: round(sum('poolWait'), 2),
      sqlMs: round(sum('sql'), 2),
      bindMs: round(sum('http'), 2),
      statements: steps.filter((x) => x.kind === 'sql').map((x) => `${x.what.slice(0, 30)} ${x.ms}`),
      loopGapMsOverlapping: round(inGaps, 1),
      gcMsOverlapping: round(inGc, 1),
      jobsOverlapping: jobs
        .filter(([start, ms]) => overlap(start, start + ms + 20, s.sentAt, s.endedAt) > 0)
        .map(([, ms, what]) => `${what.slice(0, 40)} ${ms}`),
      lateMs: round(s.lateMs, 1),
      autovacuumCpuMs: round(runIn('autovacuum', s.sentAt, s.endedAt), 1),
      autovacuumsOverlapping: pg.autovacuums
        .filter((a) => overlap(a.startMs, a.endMs, s.sentAt, s.endedAt) > 0)
        .map((a) => a.detail.replace(/^automatic /, '').slice(0, 60)),
      checkpointsOverlapping: pg.checkpoints.filter((c) => overlap(c.startMs, c.endMs, s.sentAt, s.endedAt) > 0).length,
      slowStatementsOverlapping: pg.slowStatements.filter((c) => overlap(c.startMs, c.endMs, s.sentAt, s.endedAt) > 0).length,
      othersCpuMs: round(othersIn(s.sentAt, s.endedAt).others, 1),
      stealMs: round(othersIn(s.sentAt, s.endedAt).steal, 1),
      runQueueWaitMs: {
        broker: round(waitIn('broker', s.sentAt, s.endedAt), 1),
        postgres: round(waitIn('postgres', s.sentAt, s.endedAt), 1),
        simulator: round(waitIn('simulator', s.sentAt, s.endedAt), 1),
        loadGenerator: round(waitIn('loadGenerator', s.sentAt, s.endedAt), 1),
      },
    };
  };
  const all = sent.map(describe);
  const slow = all.filter((d) => d.latencyMs >= p99);
  const typical = all.filter((d) => d.latencyMs <= p50);
  const means = (set: typeof all) => ({
    n: set.length,
    latencyMs: round(mean(set.map((d) => d.latencyMs)), 2),
    beforeArrivalMs: round(mean(set.map((d) => d.beforeArrivalMs ?? NaN)), 2),
    inBrokerMs: round(mean(set.map((d) => d.inBrokerMs ?? NaN)), 2),
    afterFinishMs: round(mean(set.map((d) => d.afterFinishMs ?? NaN)), 2),
    poolWaitMs: round(mean(set.map((d) => d.poolWaitMs)), 2),
    sqlMs: round(mean(set.map((d) => d.sqlMs)), 2),
    bindMs: round(mean(set.map((d) => d.bindMs)), 2),
    loopGapMsOverlapping: round(mean(set.map((d) => d.loopGapMsOverlapping)), 2),
    gcMsOverlapping: round(mean(set.map((d) => d.gcMsOverlapping)), 2),
    withAJobOverlapping: set.filter((d) => d.jobsOverlapping.length > 0).length,
    withAnAutovacuumOverlapping: set.filter((d) => d.autovacuumsOverlapping.length > 0).length,
    withACheckpointOverlapping: set.filter((d) => d.checkpointsOverlapping > 0).length,
    withASlowStatementOverlapping: set.filter((d) => d.slowStatementsOverlapping > 0).length,
    autovacuumCpuMs: round(mean(set.map((d) => d.autovacuumCpuMs)), 2),
    lateMs: round(mean(set.map((d) => d.lateMs)), 2),
    othersCpuMs: round(mean(set.map((d) => d.othersCpuMs)), 1),
    stealMs: round(mean(set.map((d) => d.stealMs)), 1),
    runQueueWaitMs: Object.fromEntries(
      (['broker', 'postgres', 'simulator', 'loadGenerator'] as const).map((w) => [w, round(mean(set.map((d) => d.runQueueWaitMs[w])), 2)]),
    ),
  });
  const seconds = (phase[1] - phase[0]) / 1000;
  const first = ticks[0];
  const lastTick = ticks.at(-1)!;
  const perSecond = (who: Who) => ({
    runMsPerS: round((lastTick[who].runNs - first[who].runNs) / 1e6 / seconds, 1),
    waitMsPerS: round((lastTick[who].waitNs - first[who].waitNs) / 1e6 / seconds, 1),
  });
  // The slow requests in time: clustered (a stall) or spread (queueing)?
  const slowSeconds = new Map<number, number>();
  for (const d of slow)
    slowSeconds.set(Math.floor((d.sentAt - phase[0]) / 1000), (slowSeconds.get(Math.floor((d.sentAt - phase[0]) / 1000)) ?? 0) + 1);
  return {
    p50Ms: round(p50, 2),
    p99Ms: round(p99, 2),
    p99VsP50: round(p99 / p50, 2),
    maxMs: round(Math.max(...latencies), 1),
    slowest1pct: means(slow),
    fastestHalf: means(typical),
    slowBySecondOfPhase: Object.fromEntries([...slowSeconds].sort((a, b) => a[0] - b[0])),
    // The rest of the machine's CPU in each second of the phase (ms over 2 cores): seconds with slow requests marked.
    othersCpuMsBySecond: Array.from({ length: Math.ceil(seconds) }, (_, i) => {
      const ms = round(othersIn(phase[0] + i * 1000, phase[0] + (i + 1) * 1000).others, 0);
      return slowSeconds.has(i) ? `${ms}*` : ms;
    }),
    // Autovacuum workers' CPU in each second of the phase (ms): seconds with slow requests marked.
    autovacuumCpuMsBySecond: Array.from({ length: Math.ceil(seconds) }, (_, i) => {
      const ms = round(runIn('autovacuum', phase[0] + i * 1000, phase[0] + (i + 1) * 1000), 0);
      return slowSeconds.has(i) ? `${ms}*` : ms;
    }),
    autovacuumsInPhase: pg.autovacuums
      .filter((a) => overlap(a.startMs, a.endMs, phase[0], phase[1]) > 0 || (a.startMs >= phase[0] && a.startMs <= phase[1]))
      .map((a) => ({
        atS: round((a.startMs - phase[0]) / 1000, 2),
        ms: round(a.endMs - a.startMs, 0),
        what: a.detail.replace(/^automatic /, '').slice(0, 70),
      })),
    checkpointsInPhase: pg.checkpoints.filter((c) => overlap(c.startMs, c.endMs, phase[0], phase[1]) > 0).length,
    slowStatementsInPhase: pg.slowStatements.filter((c) => overlap(c.startMs, c.endMs, phase[0], phase[1]) > 0).length,
    loopGaps: {
      count: gaps.length,
      // Over all gaps > 10 ms: the broker's main thread running (its own work, GC included) or waiting for a core.
      over10msTotal: (() => {
        const big = gaps.filter(([, ms]) => ms > 10);
        const sum = (f: (g: [number, number]) => number) =>
          round(
            big.reduce((a, g) => a + f(g), 0),
            0,
          );
        return {
          gapMs: sum(([, ms]) => ms),
          mainThreadRunMs: sum(([start, ms]) => mainIn(start, start + ms).run),
          mainThreadRunQueueWaitMs: sum(([start, ms]) => mainIn(start, start + ms).wait),
          gcMs: sum(([start, ms]) => gcs.reduce((a, [g, d]) => a + overlap(g, g + d, start, start + ms), 0)),
          withAJob: big.filter(([start, ms]) => jobs.some(([j, d]) => overlap(j, j + d + 5, start - 5, start + ms) > 0)).length,
          othersCpuMs: sum(([start, ms]) => othersIn(start, start + ms).others),
          autovacuumCpuMs: sum(([start, ms]) => runIn('autovacuum', start, start + ms)),
        };
      })(),
      over10ms: gaps.filter(([, ms]) => ms > 10).length,
      over25ms: gaps.filter(([, ms]) => ms > 25).length,
      longest: [...gaps]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([start, ms]) => ({
          atS: round((start - phase[0]) / 1000, 3),
          ms,
          gcMs: round(
            gcs.reduce((a, [g, d]) => a + overlap(g, g + d, start, start + ms), 0),
            1,
          ),
          jobs: jobs.filter(([j, d]) => overlap(j, j + d + 5, start - 5, start + ms) > 0).map(([, d, what]) => `${what.slice(0, 40)} ${d}`),
          brokerMainThread: { runMs: round(mainIn(start, start + ms).run, 1), runQueueWaitMs: round(mainIn(start, start + ms).wait, 1) },
          othersCpuMs: round(othersIn(start, start + ms).others, 1),
          autovacuumCpuMs: round(runIn('autovacuum', start, start + ms), 1),
        })),
    },
    gc: {
      // perf_hooks kinds: 1 scavenge, 2 minor mark-sweep, 4 mark-compact (old generation), 8 incremental marking, 16 weak callbacks.
      countByKind: gcs.reduce<Record<number, number>>((acc, [, , kind]) => ({ ...acc, [kind]: (acc[kind] ?? 0) + 1 }), {}),
      count: gcs.length,
      totalMs: round(
        gcs.reduce((a, [, d]) => a + d, 0),
        1,
      ),
      longestMs: round(Math.max(0, ...gcs.map(([, d]) => d)), 1),
    },
    jobsDuringPhase: Object.entries(
      jobs.reduce<Record<string, number[]>>((acc, [, ms, what]) => {
        (acc[what.slice(0, 50)] ??= []).push(round(ms, 1));
        return acc;
      }, {}),
    ).map(([what, ms]) => ({ what, count: ms.length, maxMs: Math.max(...ms) })),
    perProcessPerSecond: {
      broker: perSecond('broker'),
      postgres: perSecond('postgres'),
      autovacuum: perSecond('autovacuum'),
      simulator: perSecond('simulator'),
      loadGenerator: perSecond('loadGenerator'),
      machinePressureSomeMsPerS: round((lastTick.pressureUs - first.pressureUs) / 1000 / seconds, 1),
      othersCpuMsPerS: round(othersIn(phase[0], phase[1]).others / seconds, 1),
      stealMsPerS: round(othersIn(phase[0], phase[1]).steal / seconds, 1),
    },
    pulses:
      pulses.length === 0
        ? undefined
        : Object.fromEntries(
            (['pulse', 'control'] as const).map((kind) => {
              // Requests sent in the PULSE_WINDOW_MS after each statement ended, and the stack's CPU meanwhile.
              const mine = pulses.filter((p) => p.kind === kind);
              const after = mine.flatMap((p) => all.filter((d) => d.sentAt >= p.at + p.ms && d.sentAt < p.at + p.ms + PULSE_WINDOW_MS));
              const cpu = (who: Who) => round(mean(mine.map((p) => runIn(who, p.at + p.ms, p.at + p.ms + PULSE_WINDOW_MS))), 1);
              return [
                kind,
                {
                  statements: mine.length,
                  statementMeanMs: round(mean(mine.map((p) => p.ms)), 1),
                  requestsAfter: after.length,
                  p50MsAfter: round(
                    percentile(
                      after.map((d) => d.latencyMs),
                      50,
                    ),
                    1,
                  ),
                  p99MsAfter: round(
                    percentile(
                      after.map((d) => d.latencyMs),
                      99,
                    ),
                    1,
                  ),
                  meanMsAfter: round(mean(after.map((d) => d.latencyMs)), 1),
                  cpuMsAfterEach: {
                    postgres: cpu('postgres'),
                    broker: cpu('broker'),
                    simulator: cpu('simulator'),
                    others: round(mean(mine.map((p) => othersIn(p.at + p.ms, p.at + p.ms + PULSE_WINDOW_MS).others)), 1),
                  },
                },
              ];
            }),
          ),
    slowest: slow.sort((a, b) => b.latencyMs - a.latencyMs).slice(0, 6),
  };
}

/**
 * A variant: `+`-joined tokens, e.g. `pool=8+against`. `pool=N`: DATABASE_POOL_SIZE (default 20); `against`: the
 * broker (and its sampler) of the build in `--against=DIR`; `env:NAME=VALUE`: one more variable for the broker;
 * `sql:NAME`: before the variant, runs the statements `VARIANT_SQL[NAME]` (a database-side setting to compare).
 */
interface Variant {
  name: string;
  pool: number;
  main?: string;
  sampler: string;
  env: Record<string, string>;
  sql: string[];
  undo: string[];
}

/** The session tables a create writes. */
const HOT_TABLES = ['sessions', 'session_participants', 'webhook_events', 'webhook_deliveries', 'interactions'];
/** Database-side settings a variant may set (`sql:NAME`), each with what puts the tables back afterwards. */
const VARIANT_SQL: Record<string, { apply: string[]; undo: string[] }> = {
  // Diagnosis only: no autovacuum on the hot tables during the variant.
  avoff: {
    apply: HOT_TABLES.map((t) => `ALTER TABLE ${t} SET (autovacuum_enabled = false)`),
    undo: HOT_TABLES.map((t) => `ALTER TABLE ${t} RESET (autovacuum_enabled)`),
  },
};

function parseVariant(spec: string): Variant {
  const v: Variant = { name: spec, pool: 20, sampler: SAMPLER, env: {}, sql: [], undo: [] };
  for (const token of spec.split('+')) {
    if (token.startsWith('pool=')) v.pool = Number(token.slice(5));
    else if (token === 'against') {
      if (!AGAINST) throw new Error('variant `against` needs --against=DIR');
      v.main = join(AGAINST, 'dist/apps/broker/src/main.js');
      v.sampler = join(AGAINST, 'dist/bench/bench/support/tail-sampler.js');
    } else if (token.startsWith('env:')) {
      const [name, ...value] = token.slice(4).split('=');
      v.env[name] = value.join('=');
    } else if (token.startsWith('sql:')) {
      const statements = VARIANT_SQL[token.slice(4)];
      if (!statements) throw new Error(`unknown sql variant ${token}`);
      v.sql.push(...statements.apply);
      v.undo.push(...statements.undo);
    } else if (token !== 'this') throw new Error(`unknown variant token ${token}`);
  }
  return v;
}

async function variant(db: BenchDatabase, simUrl: string, postmaster: number, simPid: number, spec: Variant, rate: number) {
  const dbUrl = db.url;
  const pool = spec.pool;
  const file = join(tmpdir(), `tail-sampler-${process.pid}-${pool}-${Date.now()}.json`);
  if (spec.sql.length > 0) await withClient(dbUrl, async (c) => void (await c.query(spec.sql.join(';\n'))));
  try {
    return await measureVariant(dbUrl, db, simUrl, postmaster, simPid, spec, rate, pool, file);
  } finally {
    if (spec.undo.length > 0) await withClient(dbUrl, async (c) => void (await c.query(spec.undo.join(';\n'))));
  }
}

async function measureVariant(
  dbUrl: string,
  db: BenchDatabase,
  simUrl: string,
  postmaster: number,
  simPid: number,
  spec: Variant,
  rate: number,
  pool: number,
  file: string,
) {
  const broker: BrokerProcess = await startBrokerProcess(
    dbUrl,
    simUrl,
    {
      SIM_SEED_NUMBERS: '100',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      DATABASE_POOL_SIZE: String(pool),
      TAIL_SAMPLER_FILE: file,
      TAIL_SAMPLER: process.argv.includes('--gc-only') ? 'gc' : 'all',
      ...spec.env,
    },
    { nodeArgs: ['--require', spec.sampler], main: spec.main },
  );
  try {
    await resetSessions(dbUrl);
    const brokerPid = broker.child.pid!;
    const run = (amount: number) =>
      load({ url: broker.url, path: '/v1/sessions', method: 'POST', headers: HEADERS, body: createBody, connections: CONNECTIONS, amount });
    await run(1000);
    await resetSessions(dbUrl);
    const cpu0 = processCpuMs(brokerPid) + processCpuMs(simPid) + postgresCpuMs(postmaster);
    const max = await run(AMOUNT);
    const cpuPerCreate = (processCpuMs(brokerPid) + processCpuMs(simPid) + postgresCpuMs(postmaster) - cpu0) / AMOUNT;
    if (max.statuses['201'] !== AMOUNT) throw new Error(`max phase: ${JSON.stringify(max.statuses)}`);
    await resetSessions(dbUrl);
    const paceRate = rate || Math.round(max.perSecond / 2);
    const pgPids = postgresPids(postmaster);
    // --pulse: a client of our own runs the pulse statement and a control (`SELECT 1`) in turn, every PULSE_EVERY_MS.
    const pulseClient = PULSE ? new Client({ connectionString: dbUrl }) : null;
    await pulseClient?.connect();
    const pulsePid = pulseClient ? (await pulseClient.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid : -1;
    const pgSched = new PostgresSched(postmaster, pulsePid);
    const pulses: Pulse[] = [];
    let pulseTimer: NodeJS.Timeout | undefined;
    const pulseOnce = async (n: number) => {
      const kind = n % 2 === 1 ? 'pulse' : 'control';
      const at = epoch();
      await pulseClient!.query(kind === 'pulse' ? PULSES[PULSE!] : 'SELECT 1');
      pulses.push({ at, kind, ms: epoch() - at });
    };
    const ticks: Tick[] = [];
    const tick = () =>
      ticks.push({
        at: epoch(),
        pressureUs: pressureTotalUs(),
        machine: machineCpu(),
        broker: schedstat([brokerPid]),
        brokerMain: schedstat([brokerPid], true),
        simulator: schedstat([simPid]),
        ...pgSched.read(),
        loadGenerator: schedstat([process.pid]),
      });
    const quietWaitS = WAIT_QUIET > 0 ? await waitQuiet([brokerPid, simPid, process.pid, ...pgPids]) : 0;
    const load0 = loadavg();
    tick();
    const ticker = setInterval(tick, TICK_MS);
    const phaseStart = epoch();
    if (pulseClient) {
      let n = 0;
      pulseTimer = setInterval(() => void pulseOnce(++n), PULSE_EVERY_MS);
    }
    const sent = await pacedWithSeq(broker.url, paceRate, SECONDS);
    clearInterval(pulseTimer);
    await pulseClient?.end();
    const phaseEnd = epoch();
    clearInterval(ticker);
    tick();
    const load1 = loadavg();
    await broker.stop();
    const sampled = JSON.parse(readFileSync(file, 'utf8')) as Sampled;
    // PostgreSQL's log (autovacuum runs with their elapsed time, checkpoints, slow statements) for the phase.
    const log = parseServerLog(db.server ? await readServerLog(db.server.clusterDir) : '');
    const pgEvents: PgEvents = {
      autovacuums: log.autovacuums.map((a) => ({
        startMs: a.atMs - (Number.isNaN(a.elapsedMs) ? 0 : a.elapsedMs),
        endMs: a.atMs,
        detail: a.detail,
      })),
      checkpoints: log.checkpoints,
      slowStatements: log.statements,
    };
    if (sent.some((s) => s.status !== 201))
      throw new Error(`paced phase: statuses ${JSON.stringify(sent.filter((s) => s.status !== 201).slice(0, 3))}`);
    return {
      variant: spec.name,
      pool,
      maxRate: {
        perSecond: round(max.perSecond),
        p50Ms: round(max.p50, 2),
        p99Ms: round(max.p99, 2),
        cpuMsPerCreateAllThree: round(cpuPerCreate, 3),
      },
      paced: {
        waitedForQuietS: quietWaitS,
        ratePerSecond: paceRate,
        creates: sent.length,
        loadAverage: { start: load0.map((x) => round(x, 2)), end: load1.map((x) => round(x, 2)) },
        ...analyse(sent, sampled, ticks, [phaseStart, phaseEnd], pgEvents, pulses),
      },
      raw: RAW ? { sent, sampled, ticks, phase: [phaseStart, phaseEnd] } : undefined,
    };
  } finally {
    await broker.stop();
  }
}

async function main(): Promise<void> {
  const db = await startDatabase('bench_tail', { settings: postgresLogSettings(SLOW_STATEMENT_MS) });
  const sim = await startSimulatorProcess();
  try {
    const postmaster = await withClient(db.url, async (c) =>
      parentPid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid),
    );
    const results: Array<Awaited<ReturnType<typeof variant>>> = [];
    let rate = RATE;
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const spec of order) {
        const result = await variant(db, sim.url, postmaster, sim.child.pid!, parseVariant(spec), rate);
        rate ||= result.paced.ratePerSecond;
        results.push(result);
      }
    }
    if (RAW) writeFileSync(RAW, JSON.stringify(results.map((r) => r.raw)));
    const byVariant = Object.fromEntries(
      VARIANTS.map((name) => {
        const mine = results.filter((r) => r.variant === name);
        return [
          name,
          {
            maxPerSecond: mine.map((r) => r.maxRate.perSecond),
            pacedP99VsP50: mine.map((r) => r.paced.p99VsP50),
            medianP99VsP50: round(median(mine.map((r) => r.paced.p99VsP50)), 2),
            pacedP50Ms: mine.map((r) => r.paced.p50Ms),
            pacedP99Ms: mine.map((r) => r.paced.p99Ms),
            autovacuumsInPhase: mine.map((r) => r.paced.autovacuumsInPhase.length),
            othersCpuMsPerS: mine.map((r) => r.paced.perProcessPerSecond.othersCpuMsPerS),
          },
        ];
      }),
    );
    console.log(
      JSON.stringify(
        { benchmark: 'tail-probe', byVariant, runs: results.map(({ raw: _raw, ...rest }) => rest), node: process.version },
        null,
        2,
      ),
    );
  } finally {
    await sim.stop();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
