/**
 * The broker's own `/metrics`, read before and after a phase: what the broker saw during it (event-loop
 * delay, GC, statement time by class, each create step, pool connections opened), as differences.
 */
import { round } from './stats';

export type Scrape = Map<string, number>;

export async function scrape(brokerUrl: string): Promise<Scrape> {
  const text = await (await fetch(`${brokerUrl}/metrics`)).text();
  const out: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

function delta(before: Scrape, after: Scrape, key: string): number {
  return (after.get(key) ?? 0) - (before.get(key) ?? 0);
}

/** label value → { count, sum } of a histogram over the phase. */
function histogramDelta(before: Scrape, after: Scrape, name: string, label?: string) {
  const out = new Map<string, { count: number; sumMs: number }>();
  for (const key of after.keys()) {
    if (!key.startsWith(`${name}_count`)) continue;
    const labels = key.slice(`${name}_count`.length);
    const value = label ? (new RegExp(`${label}="([^"]*)"`).exec(labels)?.[1] ?? '') : '';
    const count = delta(before, after, key);
    const sumMs = delta(before, after, `${name}_sum${labels}`) * 1000;
    if (count > 0) out.set(value, { count, sumMs });
  }
  return out;
}

/** The upper bound of the highest bucket that gained an observation, in ms ('+Inf' past the last). */
function largestBucket(before: Scrape, after: Scrape, name: string): number | string {
  let previous = 0;
  let largest: number | string = 0;
  const buckets = [...after.keys()].filter((k) => k.startsWith(`${name}_bucket{`));
  for (const key of buckets) {
    const le = /le="([^"]+)"/.exec(key)![1];
    const cumulative = delta(before, after, key);
    if (cumulative > previous) largest = le === '+Inf' ? '+Inf' : round(Number(le) * 1000, 1);
    previous = cumulative;
  }
  return largest;
}

export function phaseReport(before: Scrape, after: Scrape, creates: number) {
  const steps = histogramDelta(before, after, 'broker_session_create_step_seconds', 'step');
  const statements = [...histogramDelta(before, after, 'broker_db_statement_duration_seconds', 'statement')]
    .map(([statement, s]) => ({ statement, count: s.count, meanMs: round(s.sumMs / s.count, 2), totalMs: round(s.sumMs) }))
    .sort((a, b) => b.totalMs - a.totalMs)
    .slice(0, 6);
  const loop = histogramDelta(before, after, 'broker_event_loop_delay_seconds').get('');
  const gc = [...histogramDelta(before, after, 'nodejs_gc_duration_seconds', 'kind')].reduce((t, [, s]) => t + s.sumMs, 0);
  return {
    createStepMeanMs: Object.fromEntries([...steps].map(([step, s]) => [step, round(s.sumMs / creates, 2)])),
    slowestStatementClasses: statements,
    eventLoopDelayLargestBucketMs: largestBucket(before, after, 'broker_event_loop_delay_seconds'),
    eventLoopDelayMeanMs: loop ? round(loop.sumMs / loop.count, 2) : null,
    gcPauseTotalMs: round(gc),
    poolConnectionsOpened: delta(before, after, 'broker_db_pool_connections_opened_total'),
  };
}
