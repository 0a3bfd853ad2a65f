/**
 * The simulator's CPU per bind, this build against the build in `--against=DIR`, rounds interleaved in
 * one run: each round sends `--amount` binds straight to each simulator (its own process, as the
 * benches start it) over `--connections` keep-alive connections, the order alternating by round. CPU
 * from /proc, so two other benchmarks on the same cores shift both sides alike; the load generator's own
 * CPU per bind is the noise control (the same client for both).
 *
 * Usage (after `npm run build` here and in DIR, and the bench's tsc):
 *   node dist/bench/bench/support/sim-bind-ab.js --against=DIR [--rounds=6 --amount=4000 --connections=16]
 *   add `--profile` to write each simulator's CPU profile (`--cpu-prof`) to reports/profiles/.
 * Prints one JSON object.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { simApiPath } from '@app/cpaas';
import { load } from './load';
import { ownCpuMs, processCpuMs } from './cpu';
import { startSimulatorProcess, type SimulatorProcess } from './stack';
import { median, numberArg, ratio, round } from './stats';

const ROUNDS = numberArg('rounds', 6);
const AMOUNT = numberArg('amount', 4000);
const CONNECTIONS = numberArg('connections', 16);
const AGAINST = process.argv.find((a) => a.startsWith('--against='))?.slice(10);
const PROFILE = process.argv.includes('--profile');

let seq = 0;
/** A valid bind: a fresh session and participant pair each time, one of ten proxy numbers. */
function bindBody(): string {
  seq += 1;
  const n = 10_000_000 + seq * 2;
  return JSON.stringify({
    sessionId: randomUUID(),
    proxyNumber: `+23490300000${seq % 10}`,
    participants: [`+234803${n}`, `+234803${n + 1}`],
  });
}

async function bindRound(sim: SimulatorProcess, amount: number) {
  const sim0 = processCpuMs(sim.child.pid!);
  const own0 = ownCpuMs();
  const result = await load({
    url: sim.url,
    path: `${simApiPath('primary')}/bindings`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: bindBody,
    connections: CONNECTIONS,
    amount,
  });
  if (result.statuses[201] !== amount) throw new Error(`binds to ${sim.url}: ${JSON.stringify(result.statuses)}`);
  return {
    simulator: (processCpuMs(sim.child.pid!) - sim0) / amount,
    loadGenerator: (ownCpuMs() - own0) / amount,
    perSecond: result.perSecond,
  };
}

async function main(): Promise<void> {
  if (!AGAINST) throw new Error('--against=DIR: a directory holding another build (dist/apps/cpaas-sim/src/main.js)');
  const profileArgs = (name: string) =>
    PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${resolve('reports/profiles')}`, `--cpu-prof-name=sim-${name}.cpuprofile`] : [];
  const sides = {
    base: await startSimulatorProcess(undefined, {
      main: join(resolve(AGAINST), 'dist/apps/cpaas-sim/src/main.js'),
      nodeArgs: profileArgs('base'),
    }),
    this: await startSimulatorProcess(undefined, { nodeArgs: profileArgs('this') }),
  };
  const names = ['base', 'this'] as const;
  const rounds: Record<(typeof names)[number], Array<Awaited<ReturnType<typeof bindRound>>>> = { base: [], this: [] };
  const load0 = loadavg();
  try {
    // Warm both (JIT, connection pools), then measure.
    for (const name of names) await bindRound(sides[name], Math.min(AMOUNT, 2000));
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? names : ([...names].reverse() as (typeof names)[number][]);
      for (const name of order) rounds[name].push(await bindRound(sides[name], AMOUNT));
    }
  } finally {
    await Promise.all(names.map((name) => sides[name].stop()));
  }
  const summary = (name: (typeof names)[number]) => ({
    simulatorCpuMsPerBind: rounds[name].map((x) => round(x.simulator, 3)),
    loadGeneratorCpuMsPerBind: rounds[name].map((x) => round(x.loadGenerator, 3)),
    bindsPerSecond: rounds[name].map((x) => round(x.perSecond, 0)),
    medianSimulatorCpuMs: round(median(rounds[name].map((x) => x.simulator)), 3),
  });
  const pairs = rounds.this.map((x, i) => ratio(x.simulator, rounds.base[i].simulator));
  console.log(
    JSON.stringify(
      {
        how: `${ROUNDS} interleaved rounds of ${AMOUNT} binds at ${CONNECTIONS} connections per simulator; CPU ms per bind from /proc`,
        against: resolve(AGAINST),
        loadAverage: { start: load0.map((x) => round(x, 2)), end: loadavg().map((x) => round(x, 2)) },
        base: summary('base'),
        this: summary('this'),
        thisOverBasePerRound: pairs,
        thisOverBaseMedian: ratio(median(rounds.this.map((x) => x.simulator)), median(rounds.base.map((x) => x.simulator))),
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
