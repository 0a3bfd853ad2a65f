/**
 * PostgreSQL's cost of one `POST /v1/sessions` create, statement by statement: a throwaway local server
 * with pg_stat_statements (`track_planning`, nested statements tracked), one broker (this build, or the
 * build in `--main=DIR`) and the simulator; a warm-up, then `--amount` creates at `--connections`, and per
 * create: the server's CPU ms (/proc), WAL records, full-page images and bytes (pg_stat_wal), the
 * statements' execution and planning ms and calls, and the tables' updates and HOT updates.
 * `--callback` sends a callbackUrl on every create (each activation then inserts a delivery and NOTIFYs).
 * Usage: node dist/bench/bench/sessions/pg-cost.js [--amount=3000 --connections=16 --rounds=2 --main=DIR --callback]
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { load } from '../support/load';
import { parentPid, postgresCpuMs } from '../support/cpu';
import { resetSessions, withClient } from '../support/pool-rule';
import { readServerLog } from '../support/postgres-log';
import { BENCH_API_KEY, startBrokerProcess, startDatabase, startSimulatorProcess } from '../support/stack';
import { numberArg, round } from '../support/stats';

const CONNECTIONS = numberArg('connections', 16);
const AMOUNT = numberArg('amount', 3000);
const ROUNDS = numberArg('rounds', 2);
const MAIN = process.argv.find((a) => a.startsWith('--main='))?.slice(7);
const CALLBACK = process.argv.includes('--callback');
/** `--explain`: auto_explain logs the plans of about 1 in 500 creates' statements, nested ones included, into the server log (printed). */
const EXPLAIN = process.argv.includes('--explain');

let seq = 0;
function body(): string {
  seq += 2;
  const [a, b] = [`+234803${String(seq).padStart(7, '0')}`, `+234803${String(seq + 1).padStart(7, '0')}`];
  return JSON.stringify({
    channel: 'sms',
    participants: [{ number: a }, { number: b }],
    ...(CALLBACK && { callbackUrl: 'http://127.0.0.1:1999/hooks' }),
  });
}

const STATS = `
  SELECT (SELECT wal_records FROM pg_stat_wal)::float8 AS wal_records, (SELECT wal_fpi FROM pg_stat_wal)::float8 AS wal_fpi,
         (SELECT wal_bytes FROM pg_stat_wal)::float8 AS wal_bytes`;

async function main(): Promise<void> {
  const db = await startDatabase('bench_pg_cost', {
    settings: {
      shared_preload_libraries: 'pg_stat_statements',
      'pg_stat_statements.track': 'all',
      'pg_stat_statements.track_planning': 'on',
      track_io_timing: 'off',
      ...(EXPLAIN && {
        session_preload_libraries: 'auto_explain',
        'auto_explain.log_min_duration': '0',
        'auto_explain.log_analyze': 'on',
        'auto_explain.log_timing': 'off',
        'auto_explain.log_buffers': 'on',
        'auto_explain.log_nested_statements': 'on',
        'auto_explain.sample_rate': '0.002',
      }),
    },
  });
  const sim = await startSimulatorProcess();
  const env = {
    SIM_SEED_NUMBERS: '100',
    SESSION_SWEEP_INTERVAL_MS: '3600000',
    BREAKER_HEALTH_INTERVAL_MS: '3600000',
    // --callback: a local URL nobody listens on (each delivery is tried, refused and retried later, alike for both builds).
    ...(CALLBACK && { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }),
  };
  const broker = await startBrokerProcess(db.url, sim.url, env, MAIN ? { main: join(MAIN, 'dist/apps/broker/src/main.js') } : {});
  const create = (amount: number) =>
    load({
      url: broker.url,
      path: '/v1/sessions',
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' },
      body,
      connections: CONNECTIONS,
      amount,
    });
  try {
    await withClient(db.url, (c) => c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements'));
    const postmaster = await withClient(db.url, async (c) =>
      parentPid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid),
    );
    await resetSessions(db.url);
    await create(1000);
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      await resetSessions(db.url);
      await withClient(db.url, async (c) => {
        await c.query('SELECT pg_stat_statements_reset()');
        await c.query(`SELECT pg_stat_reset_shared('wal')`);
        await c.query('SELECT pg_stat_reset()');
      });
      const cpu0 = postgresCpuMs(postmaster);
      const result = await create(AMOUNT);
      const cpu = postgresCpuMs(postmaster) - cpu0;
      const creates = result.statuses['201'] ?? 0;
      if (creates !== AMOUNT) throw new Error(`${creates} of ${AMOUNT} creates answered 201: ${JSON.stringify(result.statuses)}`);
      rounds.push(
        await withClient(db.url, async (c) => {
          // pg_stat_wal and table stats are sent at transaction end / on a timer; give them a moment.
          await new Promise((r) => setTimeout(r, 1500));
          const wal = (await c.query(STATS)).rows[0];
          const statements = (
            await c.query(
              `SELECT calls, round((total_exec_time / $1)::numeric, 4)::float8 AS exec_ms, round((total_plan_time / $1)::numeric, 4)::float8 AS plan_ms,
                      plans, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
                 FROM pg_stat_statements WHERE calls >= $1 / 10 ORDER BY total_exec_time + total_plan_time DESC LIMIT 25`,
              [creates],
            )
          ).rows;
          const tables = (
            await c.query(
              `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables
                WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY relname`,
            )
          ).rows;
          return {
            creates,
            perSecond: round(result.perSecond, 0),
            postgresCpuMsPerCreate: round(cpu / creates, 3),
            walRecordsPerCreate: round(wal.wal_records / creates, 2),
            walFpiPerCreate: round(wal.wal_fpi / creates, 3),
            walBytesPerCreate: round(wal.wal_bytes / creates, 0),
            statements,
            tables,
          };
        }),
      );
    }
    if (EXPLAIN) console.error(await readServerLog(db.server!.clusterDir));
    console.log(
      JSON.stringify({ benchmark: 'sessions pg-cost', main: MAIN ?? 'this build', callback: CALLBACK, rounds, load: loadavg() }, null, 2),
    );
  } finally {
    await broker.stop();
    await sim.stop();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
