/**
 * Creates after a quiet spell: the broker is left idle for `quietMs`, then takes creates evenly paced
 * (open loop) for a few seconds. The first second's p99 after 30 s of quiet against the same after 1 s of
 * quiet shows whatever the broker or the database lets go while idle (pooled connections, caches) and
 * makes the next burst pay for. Before each burst the broker's open database connections are read from
 * its `/metrics`, so the figure says whether connections were dropped; what the broker saw during the
 * burst (event-loop delay, GC, statements, connections opened) comes from there too.
 *
 * Also: what one PostgreSQL connection costs here (TCP, backend fork, SCRAM exchange, first query), one
 * at a time and twenty at once, as the pool would open them.
 */
import { Client } from 'pg';
import { RESERVE_SQL } from '../../apps/broker/src/sessions';
import { reserveParams } from '../support/reserve-params';
import { phaseReport, scrape } from '../support/broker-metrics';
import { paced, type PacedResult } from '../support/load';
import { machineProbe, type ProbeFigures } from '../support/machine-probe';
import { sleep } from '../support/stack';
import { median, nowMs, percentile, ratio, round } from '../support/stats';

export interface QuietBurstOptions {
  /** Each quiet spell is followed by a burst on each broker in turn (the later ones' quiet includes the earlier bursts). */
  brokers: Array<{ name: string; url: string }>;
  headers: Record<string, string>;
  body: () => string;
  rate: number;
  seconds: number;
  quietsMs: number[];
  /** The machine probe's calibrated size (`calibrateProbe`): each burst then also times the machine itself. */
  probeSize?: number;
  /** Each create as it ends, with the quiet before its burst (to line up with PostgreSQL's log). */
  onResult?: (quietMs: number, result: PacedResult) => void;
}

export interface BurstFigures {
  broker: string;
  quietMs: number;
  brokerConnectionsBefore: number;
  creates: number;
  firstSecondP99Ms: number;
  firstSecondMaxMs: number;
  p50Ms: number;
  p99Ms: number;
  over100Ms: number;
  /** The same fixed arithmetic timed throughout the burst, in the load generator: the machine's own speed. */
  machine?: ProbeFigures;
  seenByBroker: ReturnType<typeof phaseReport>;
}

/** Creates evenly paced at `rate` for `seconds` (open loop): one burst. */
function burstOfCreates(
  url: string,
  burst: { headers: Record<string, string>; body: () => string; rate: number; seconds: number },
  onResult?: (result: PacedResult) => void,
): Promise<PacedResult[]> {
  return paced({
    url,
    path: '/v1/sessions',
    method: 'POST',
    headers: burst.headers,
    body: burst.body,
    rate: burst.rate,
    amount: Math.round(burst.rate * burst.seconds),
    onResult,
  });
}

export async function quietBursts(options: QuietBurstOptions): Promise<BurstFigures[]> {
  const out: BurstFigures[] = [];
  for (const [i, quietMs] of options.quietsMs.entries()) {
    await sleep(quietMs);
    // The order alternates, so neither broker always goes first.
    const turn = i % 2 === 0 ? options.brokers : [...options.brokers].reverse();
    for (const broker of turn) {
      const scraped = await scrape(broker.url);
      const before = scraped.get('broker_db_pool_clients{state="total"}') ?? NaN;
      const probe = options.probeSize ? machineProbe(options.probeSize) : null;
      const results = await burstOfCreates(broker.url, options, options.onResult && ((r) => options.onResult!(quietMs, r)));
      const machine = await probe?.stop();
      if (results.some((r) => r.status !== 201)) throw new Error(`burst after ${quietMs} ms quiet: a create did not answer 201`);
      out.push({
        broker: broker.name,
        ...figures(quietMs, before, results),
        ...(machine && { machine }),
        seenByBroker: phaseReport(scraped, await scrape(broker.url), results.length),
      });
    }
  }
  return out;
}

function figures(quietMs: number, before: number, results: PacedResult[]): Omit<BurstFigures, 'broker' | 'seenByBroker'> {
  const start = Math.min(...results.map((r) => r.sentAt));
  const first = results.filter((r) => r.sentAt - start < 1000).map((r) => r.latencyMs);
  const all = results.map((r) => r.latencyMs);
  return {
    quietMs,
    brokerConnectionsBefore: before,
    creates: results.length,
    firstSecondP99Ms: round(percentile(first, 99), 2),
    firstSecondMaxMs: round(Math.max(...first), 2),
    p50Ms: round(percentile(all, 50), 2),
    p99Ms: round(percentile(all, 99), 2),
    over100Ms: all.filter((ms) => ms > 100).length,
  };
}

/** The 30 s burst's first-second p99 over the 1 s burst's (target ≤ 2). */
export function quietRatio(bursts: BurstFigures[], broker: string, longMs: number, shortMs: number): number {
  const long = bursts.filter((b) => b.broker === broker && b.quietMs === longMs).map((b) => b.firstSecondP99Ms);
  const short = bursts.filter((b) => b.broker === broker && b.quietMs === shortMs).map((b) => b.firstSecondP99Ms);
  return ratio(median(long), median(short));
}

/**
 * The control for the bursts: the machine probe alone after each quiet spell, no request sent. If
 * its first second is slower than the rest after a long quiet, the machine (not the stack) is what
 * lets go while idle.
 */
export async function idleMachine(probeSize: number, quietsMs: number[], seconds = 3) {
  const out: Array<{ quietMs: number } & ProbeFigures> = [];
  for (const quietMs of quietsMs) {
    await sleep(quietMs);
    const probe = machineProbe(probeSize);
    await sleep(seconds * 1000);
    out.push({ quietMs, ...(await probe.stop()) });
  }
  return out;
}

/**
 * Milliseconds to connect and answer `SELECT 1`: `samples` one at a time (median), then `together` at
 * once (until the last); and the allocator's statement (rolled back) as the first on a new backend,
 * whose catalog caches are cold, against the same statement run again on it.
 */
export async function connectionCost(url: string, accountId: string, samples = 10, together = 20) {
  const once = async () => {
    const t0 = nowMs();
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query('SELECT 1');
    const ms = nowMs() - t0;
    await client.end();
    return ms;
  };
  const alone: number[] = [];
  for (let i = 0; i < samples; i++) alone.push(await once());
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < samples; i++) {
    const client = new Client({ connectionString: url });
    await client.connect();
    for (const into of [cold, warm]) {
      const pair = ['+447000000001', '+447000000002'] as const;
      await client.query('BEGIN');
      const t0 = nowMs();
      await client.query(RESERVE_SQL, reserveParams({ provider: 'primary', accountId, participants: pair, participantLimit: 3 }));
      into.push(nowMs() - t0);
      await client.query('ROLLBACK');
    }
    await client.end();
  }
  const t0 = nowMs();
  const each = await Promise.all(Array.from({ length: together }, once));
  return {
    oneMedianMs: round(median(alone), 2),
    reservationOnNewBackendMedianMs: round(median(cold), 2),
    reservationAgainMedianMs: round(median(warm), 2),
    [`${together}AtOnceLastMs`]: round(nowMs() - t0, 2),
    [`${together}AtOnceMedianMs`]: round(median(each), 2),
  };
}
