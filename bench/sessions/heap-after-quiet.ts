/**
 * What V8's heap does to a burst of creates after a quiet spell: the broker under `--trace-gc`, once with
 * its runtime flags (apps/broker/src/runtime-flags.ts) and once with V8's defaults put back, each warmed
 * with `warm` creates, then bursts at `rate` for `seconds` after each quiet spell. Per burst: scavenges and
 * mark-compacts (those of V8's memory reducer apart), collections during the quiet before it, the pauses
 * over 8 ms, and the first second's p99.
 */
import { load } from '../support/load';
import { burstOfCreates } from './quiet-burst';
import { startBrokerProcess, sleep } from '../support/stack';
import { percentile, round } from '../support/stats';

export interface HeapAfterQuietOptions {
  databaseUrl: string;
  simUrl: string;
  env: Record<string, string>;
  headers: Record<string, string>;
  body: () => string;
  warm: number;
  rate: number;
  seconds: number;
  quietsMs: number[];
  /** Empties the session tables (before each variant). */
  reset: () => Promise<void>;
}

const GC_LINE = /ms: (Scavenge|Mark-Compact|Mark-sweep)/;

function collections(lines: string[]) {
  const pause = (l: string) => Number(/MB, ([\d.]+) \//.exec(l)?.[1] ?? 0);
  return {
    scavenges: lines.filter((l) => l.includes('Scavenge')).length,
    markCompacts: lines.filter((l) => l.includes('Mark-Compact') && !l.includes('(reduce)')).length,
    memoryReducer: lines.filter((l) => l.includes('(reduce)')).length,
    pausesOver8Ms: lines.map(pause).filter((ms) => ms > 8),
  };
}

export async function heapAfterQuiet(options: HeapAfterQuietOptions) {
  const variants = [
    { name: 'runtime flags', nodeArgs: ['--trace-gc'] },
    // Later flags win: V8's defaults back on top of the runtime flags the stack passes.
    { name: 'V8 defaults', nodeArgs: ['--min-semi-space-size=0', '--memory-reducer', '--trace-gc'] },
  ];
  const out = [];
  for (const variant of variants) {
    await options.reset();
    const broker = await startBrokerProcess(options.databaseUrl, options.simUrl, options.env, { nodeArgs: variant.nodeArgs });
    // The trace lines as they come (the handle's own output buffer is trimmed on long runs).
    const gc: string[] = [];
    let partial = '';
    broker.child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      gc.push(...lines.filter((l) => GC_LINE.test(l)));
    });
    try {
      await load({
        url: broker.url,
        path: '/v1/sessions',
        method: 'POST',
        headers: options.headers,
        body: options.body,
        connections: 16,
        amount: options.warm,
      });
      const bursts = [];
      for (const quietMs of options.quietsMs) {
        const quietFrom = gc.length;
        await sleep(quietMs);
        const burstFrom = gc.length;
        const results = await burstOfCreates(broker.url, options);
        if (results.some((r) => r.status !== 201)) throw new Error(`heap bursts: a create did not answer 201`);
        const start = Math.min(...results.map((r) => r.sentAt));
        const first = results.filter((r) => r.sentAt - start < 1000).map((r) => r.latencyMs);
        bursts.push({
          quietMs,
          duringQuiet: collections(gc.slice(quietFrom, burstFrom)),
          duringBurst: collections(gc.slice(burstFrom)),
          firstSecondP99Ms: round(percentile(first, 99), 2),
          p99Ms: round(
            percentile(
              results.map((r) => r.latencyMs),
              99,
            ),
            2,
          ),
        });
      }
      out.push({ variant: variant.name, nodeArgs: variant.nodeArgs, bursts });
    } finally {
      await broker.stop();
    }
  }
  return out;
}
