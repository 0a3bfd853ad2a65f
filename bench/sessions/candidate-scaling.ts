/**
 * `--scaling`: what a create and the pool-usage refresh cost as the active sessions grow (issue #34 item 3). Active
 * sessions are added in bulk (one statement, spread evenly over the primary's numbers, participants never reused)
 * up to each step; at each step:
 *
 * - `createsPerSecond`: creates through the running broker's HTTP API (the simulator's path: reservation, bind,
 *   activation), `rounds` phases of `amount`; the sessions a phase made are closed after it, so every phase starts
 *   at the step's count;
 * - `reserveMedianMs`: the allocator's own statement (`RESERVE_SQL`, inside a transaction rolled back, so the tables
 *   do not change between samples), median of 30;
 * - `poolUsageRefreshMs`: the refresh as the broker runs it (ProxyNumberRepository.poolUsage: the fold of the load
 *   changes the phases wrote, then the read), the first one after the phases (which folds them) and the median of 10
 *   more; `poolUsageReadsServerMs`: its two reads' time inside PostgreSQL (EXPLAIN ANALYZE, planning included), without
 *   the client's wait for a core; `scanMs` / `scanServerMs`: the two queries the refresh ran before the counts (a scan of
 *   the active sessions), the same two ways, median of 5.
 *
 * The top-level figures: the create rate at the top ÷ at the first step (1 000), and the refresh at the top.
 */
import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { ENTITIES } from '../../apps/broker/src/entities';
import { JOB_LOCKS } from '../../apps/broker/src/database';
import { ProxyNumberRepository } from '../../apps/broker/src/numbers';
import { RESERVE_SQL } from '../../apps/broker/src/sessions';
import type { LoadResult } from '../support/load';
import { median, nowMs, ratio, round } from '../support/stats';
import { reserveParams } from '../support/reserve-params';

/** Active sessions spread evenly over the primary's numbers, participants never reused (+45…, not the creates' +234…). */
const BULK = `
  WITH pn AS (SELECT id, number, row_number() OVER (ORDER BY number) - 1 AS k, count(*) OVER () AS n FROM proxy_numbers WHERE provider = 'primary'),
  s AS (
    INSERT INTO sessions (account_id, channels, status, provider, proxy_number_id, proxy_number, participants, expires_at, inactive_at)
    SELECT $1, '{sms}', 'active', 'primary', pn.id, pn.number,
           ARRAY['+45' || lpad((g * 2)::text, 10, '0'), '+45' || lpad((g * 2 + 1)::text, 10, '0')], now() + interval '1 day',
           now() + interval '1 day'
      FROM generate_series($2::int, $3::int - 1) g JOIN pn ON pn.k = g % pn.n
    RETURNING id, proxy_number_id, participants, expires_at)
  INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, partner)
  SELECT s.id, p.number, s.proxy_number_id, true, s.expires_at,
         CASE WHEN p.number = s.participants[1] THEN s.participants[2] ELSE s.participants[1] END
    FROM s, unnest(s.participants) AS p(number)`;

/** The refresh's two reads now (ProxyNumberRepository.poolUsage, after its fold), for their time inside PostgreSQL. */
const READS = [
  `SELECT provider, count(*)::int AS total, (count(*) FILTER (WHERE enabled))::int AS enabled,
          (count(*) FILTER (WHERE enabled AND 'voice' = ANY(capabilities)))::int AS voice,
          (count(*) FILTER (WHERE enabled AND 'sms' = ANY(capabilities)))::int AS sms
     FROM proxy_numbers GROUP BY provider`,
  `SELECT pn.provider, l.proxy_number_id, l.channels, sum(l.active)::int AS active
     FROM (SELECT proxy_number_id, channels, active FROM proxy_number_loads
           UNION ALL SELECT proxy_number_id, channels, delta FROM proxy_number_load_changes) l
     JOIN proxy_numbers pn ON pn.id = l.proxy_number_id
    GROUP BY pn.provider, l.proxy_number_id, l.channels HAVING sum(l.active) > 0`,
];

/** Execution time inside PostgreSQL (EXPLAIN ANALYZE's), in ms: what the client's wait adds on a busy machine is left out. */
async function serverMs(client: Client, sql: string): Promise<number> {
  const { rows } = await client.query<{ 'QUERY PLAN': Array<{ 'Execution Time': number; 'Planning Time': number }> }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
  );
  return rows[0]['QUERY PLAN'][0]['Execution Time'] + rows[0]['QUERY PLAN'][0]['Planning Time'];
}

/** The refresh's queries before the counts (the pool usage read until migration PoolUsageCounts). */
const SCAN = [
  `SELECT provider, proxy_number_id, count(*)::int AS active
     FROM sessions WHERE status = 'active' AND inactive_at > now() GROUP BY provider, proxy_number_id`,
  `SELECT provider, array_to_string(channels, '+') AS channels, count(*)::int AS active
     FROM sessions WHERE status = 'active' AND inactive_at > now() GROUP BY provider, channels`,
];

export interface ScalingOptions {
  client: Client;
  databaseUrl: string;
  accountId: string;
  steps: number[];
  rounds: number;
  amount: number;
  /** One phase of `amount` creates through the broker. */
  creates: (amount: number) => Promise<LoadResult>;
}

export interface ScalingStep {
  activeSessions: number;
  createsPerSecond: number;
  createRounds: number[];
  reserveMedianMs: number;
  poolUsageRefreshMs: number;
  poolUsageRefreshAfterPhasesMs: number;
  /** The two reads' planning and execution inside PostgreSQL, median of 5. */
  poolUsageReadsServerMs: number;
  scanMs: number;
  scanServerMs: number;
}

export async function candidateScaling(options: ScalingOptions) {
  const { client, accountId } = options;
  const dataSource = await new DataSource(
    brokerDataSourceOptions({ url: options.databaseUrl, entities: ENTITIES, poolSize: 2 }),
  ).initialize();
  const repository = new ProxyNumberRepository(dataSource);
  const timed = async (work: () => Promise<unknown>) => {
    const t0 = nowMs();
    await work();
    return nowMs() - t0;
  };
  const reserve = async () => {
    const samples: number[] = [];
    for (let i = 0; i < 30; i++) {
      const pair = ['+447000000001', '+447000000002'] as const;
      await client.query('BEGIN');
      samples.push(await timed(() => client.query(RESERVE_SQL, reserveParams({ provider: 'primary', accountId, participants: pair }))));
      await client.query('ROLLBACK');
    }
    return median(samples);
  };
  /** Ends what the phases made (the creates' participants are not the bulk's +45…), as closes would. */
  const closeCreated = async () => {
    await client.query(
      `WITH c AS (UPDATE sessions SET status = 'closed', ended_at = now() WHERE status = 'active' AND participants[1] NOT LIKE '+45%' RETURNING id)
       UPDATE session_participants sp SET active = false FROM c WHERE sp.session_id = c.id`,
    );
  };
  const rows: ScalingStep[] = [];
  let total = 0;
  try {
    for (const target of options.steps) {
      if (target > total) {
        // In slices, so one statement's memory stays bounded at a million.
        for (let from = total; from < target; from += 100_000)
          await client.query(BULK, [accountId, from, Math.min(target, from + 100_000)]);
        // The fold first: it empties the load changes the bulk wrote (a million rows at the top), and the vacuum then
        // clears them, as autovacuum does on a live system, whose folds every POOL_USAGE_REFRESH_MS remove a few
        // hundred rows at a time. Measured before the vacuum, every later read walked the million dead rows.
        await repository.poolUsage(JOB_LOCKS.poolUsageFold);
        await client.query('VACUUM ANALYZE sessions, session_participants, proxy_number_load_changes, proxy_number_loads');
        total = target;
      }
      const createRounds: number[] = [];
      for (let r = 0; r < options.rounds; r++) {
        const result = await options.creates(options.amount);
        if (result.errors > 0 || result.statuses['201'] !== options.amount)
          throw new Error(`expected ${options.amount} × 201, got ${JSON.stringify(result.statuses)} and ${result.errors} errors`);
        createRounds.push(round(result.perSecond, 1));
      }
      const afterPhases = await timed(() => repository.poolUsage(JOB_LOCKS.poolUsageFold));
      const refresh: number[] = [];
      for (let i = 0; i < 10; i++) refresh.push(await timed(() => repository.poolUsage(JOB_LOCKS.poolUsageFold)));
      await closeCreated();
      await repository.poolUsage(JOB_LOCKS.poolUsageFold);
      const scan: number[] = [];
      const scanServer: number[] = [];
      const readsServer: number[] = [];
      for (let i = 0; i < 5; i++) {
        scan.push(await timed(async () => Promise.all(SCAN.map((sql) => client.query(sql)))));
        scanServer.push((await serverMs(client, SCAN[0])) + (await serverMs(client, SCAN[1])));
        readsServer.push((await serverMs(client, READS[0])) + (await serverMs(client, READS[1])));
      }
      rows.push({
        activeSessions: total,
        createsPerSecond: round(median(createRounds), 1),
        createRounds,
        reserveMedianMs: round(await reserve(), 2),
        poolUsageRefreshMs: round(median(refresh), 2),
        poolUsageRefreshAfterPhasesMs: round(afterPhases, 2),
        poolUsageReadsServerMs: round(median(readsServer), 2),
        scanMs: round(median(scan), 1),
        scanServerMs: round(median(scanServer), 1),
      });
    }
  } finally {
    await dataSource.destroy();
  }
  const [first, top] = [rows[0], rows[rows.length - 1]];
  return {
    top: top.activeSessions,
    rateAtTopVsAt1000: ratio(top.createsPerSecond, first.createsPerSecond),
    poolUsageRefreshMsAtTop: top.poolUsageRefreshMs,
    poolUsageReadsServerMsAtTop: top.poolUsageReadsServerMs,
    reserveAtTopVsAt1000: ratio(top.reserveMedianMs, first.reserveMedianMs),
    steps: rows,
  };
}
