/**
 * Per-call overhead of guarding an async call with a circuit breaker (admission, run, record): this
 * library, opossum and cockatiel, in one process, on the same workload, in alternating rounds.
 *
 * The guarded call is an async function that resolves at once, so what is measured is the guard. Each
 * contender is the loop an application's async function would contain: `await call()` bare (the baseline),
 * `await opossum.fire()`, `await cockatiel.execute(call)`, and for this library both of its forms:
 * admit → `await call()` → record (how the broker guards a provider call, admission being synchronous) and
 * `await breaker.execute(call)` (a wrapper like the other two). Every round runs every contender, in an
 * order that rotates each round; a contender's overhead is its ns/call minus the baseline's in the same
 * round; figures are medians over the measured rounds. Prints one JSON object.
 *
 * Usage: npm run bench:breaker [-- --calls=200000 --rounds=21 --warmup=3]
 */
import { CircuitBreaker, telephonyPolicy, type BreakerPolicy, type Outcome } from '@app/circuit-breaker';
import { ConsecutiveBreaker, circuitBreaker as cockatielBreaker, handleAll } from 'cockatiel';
import Opossum from 'opossum';

const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.split('=')[1]);
};
const CALLS = arg('calls', 200_000);
const ROUNDS = arg('rounds', 21);
const WARMUP_ROUNDS = arg('warmup', 3);

async function call(): Promise<number> {
  return 42;
}

// The product's policy: 5 consecutive failures or > 10 % over a 2-minute window of 120 buckets. The window
// stamps every outcome with scheduler.now() (Date.now() with the default asyncScheduler).
const telephony = telephonyPolicy();
// Like for like with cockatiel's ConsecutiveBreaker: no window, so no clock read per call.
const consecutive: BreakerPolicy = { ...telephony, trip: [{ kind: 'consecutive-failures', failures: 5 }] };

const oursTelephony = new CircuitBreaker(telephony);
const oursTelephonyExecute = new CircuitBreaker(telephony);
const oursConsecutive = new CircuitBreaker(consecutive);
const oursConsecutiveExecute = new CircuitBreaker(consecutive);
// opossum: its defaults (50 % over a 10 s rolling window, timer-driven buckets) except its per-call timeout,
// which would arm a timer on every call; none of the others times out here.
const opossum = new Opossum(call, { timeout: false, resetTimeout: 30_000 });
// cockatiel: its cheapest breaker, 5 consecutive failures.
const cockatiel = cockatielBreaker(handleAll, { halfOpenAfter: 30_000, breaker: new ConsecutiveBreaker(5) });

/** admit → run → record, as the broker writes it around a provider call. */
function admitRunRecord(breaker: CircuitBreaker): (calls: number) => Promise<void> {
  return async (calls) => {
    for (let i = 0; i < calls; i++) {
      const admission = breaker.admit();
      if (!admission.admitted) throw new Error('not admitted');
      try {
        await call();
        breaker.record({ kind: 'success', probe: admission.probe });
      } catch (error) {
        const failure: Outcome = { kind: 'failure', reason: String(error), probe: admission.probe };
        breaker.record(failure);
        throw error;
      }
    }
  };
}

function execute(breaker: CircuitBreaker): (calls: number) => Promise<void> {
  return async (calls) => {
    for (let i = 0; i < calls; i++) await breaker.execute(call);
  };
}

const contenders: Record<string, (calls: number) => Promise<void>> = {
  baseline: async (calls) => {
    for (let i = 0; i < calls; i++) await call();
  },
  ours_admit_record_consecutive: admitRunRecord(oursConsecutive),
  ours_execute_consecutive: execute(oursConsecutiveExecute),
  ours_admit_record_telephony: admitRunRecord(oursTelephony),
  ours_execute_telephony: execute(oursTelephonyExecute),
  opossum: async (calls) => {
    for (let i = 0; i < calls; i++) await opossum.fire();
  },
  cockatiel: async (calls) => {
    for (let i = 0; i < calls; i++) await cockatiel.execute(call);
  },
};
const names = Object.keys(contenders);
const guards = names.filter((n) => n !== 'baseline');

async function nsPerCall(run: (calls: number) => Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await run(CALLS);
  return Number(process.hrtime.bigint() - started) / CALLS;
}

const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
const median = (xs: number[]): number => {
  const s = sorted(xs);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const iqr = (xs: number[]): [number, number] => {
  const s = sorted(xs);
  return [s[Math.floor((s.length - 1) / 4)], s[Math.ceil(((s.length - 1) * 3) / 4)]];
};
const r1 = (x: number): number => Math.round(x * 10) / 10;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const gc = (globalThis as { gc?: () => void }).gc;

function version(name: string): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(`${name}/package.json`) as { version: string }).version;
}

async function main(): Promise<void> {
  const perCall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const overhead: Record<string, number[]> = Object.fromEntries(guards.map((n) => [n, []]));
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]);
    const results: Record<string, number> = {};
    for (const name of order) {
      gc?.();
      results[name] = await nsPerCall(contenders[name]);
    }
    if (round < WARMUP_ROUNDS) continue;
    for (const name of names) perCall[name].push(results[name]);
    for (const name of guards) overhead[name].push(results[name] - results.baseline);
  }

  const over = Object.fromEntries(guards.map((n) => [n, median(overhead[n])]));
  const fasterOther = Math.min(over.opossum, over.cockatiel);
  const ours = guards.filter((n) => n.startsWith('ours'));
  const result = {
    bench: 'breaker',
    node: process.version,
    calls_per_round: CALLS,
    rounds: ROUNDS,
    warmup_rounds: WARMUP_ROUNDS,
    gc_between_runs: gc !== undefined,
    workload: 'call = async () => 42, awaited in a loop; all successes, every breaker stays CLOSED',
    contenders: {
      ours_admit_record_consecutive: 'admit() → await call() → record(); consecutive-failures 5 (the rule cockatiel runs)',
      ours_execute_consecutive: 'await execute(call); consecutive-failures 5',
      ours_admit_record_telephony:
        'admit() → await call() → record(); telephonyPolicy(): 5 consecutive + > 10 % over a 2-min window (a scheduler.now() per outcome)',
      ours_execute_telephony: 'await execute(call); telephonyPolicy()',
      opossum: `opossum ${version('opossum')} await fire(); defaults (rolling 10 s window) with timeout: false`,
      cockatiel: `cockatiel ${version('cockatiel')} await execute(call); ConsecutiveBreaker(5)`,
    },
    ns_per_call: Object.fromEntries(names.map((n) => [n, r1(median(perCall[n]))])),
    overhead_ns_per_call: Object.fromEntries(guards.map((n) => [n, r1(over[n])])),
    overhead_iqr_ns: Object.fromEntries(guards.map((n) => [n, iqr(overhead[n]).map(r1)])),
    faster_of_opossum_and_cockatiel: over.opossum <= over.cockatiel ? 'opossum' : 'cockatiel',
    ratio_vs_faster: Object.fromEntries(ours.map((n) => [n, r3(over[n] / fasterOther)])),
    ratio_vs_opossum: Object.fromEntries(ours.map((n) => [n, r3(over[n] / over.opossum)])),
    ratio_vs_cockatiel: Object.fromEntries(ours.map((n) => [n, r3(over[n] / over.cockatiel)])),
    target: 'overhead of ours <= 0.5 x overhead of the faster of opossum and cockatiel',
    target_met: Object.fromEntries(ours.map((n) => [n, over[n] / fasterOther <= 0.5])),
    sanity: {
      ours_state: oursTelephony.status().state,
      ours_attempts: oursTelephony.status().attempts,
      opossum_opened: opossum.opened,
    },
  };
  opossum.shutdown();
  for (const breaker of [oursTelephony, oursTelephonyExecute, oursConsecutive, oursConsecutiveExecute]) breaker.dispose();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
