/**
 * What a backend's first reservation costs after its cached plans were invalidated (issue #19): one warm
 * connection runs the broker's prepared reservation (RESERVE_SQL), a second one runs `SELECT 1` (the control),
 * `ANALYZE` of the hot tables (what autovacuum's analyze does) or the bench's `TRUNCATE` between phases, and the
 * first reservation after it is timed against the next one, `--rounds` (9) times each; medians in ms.
 * Usage: node dist/bench/bench/support/replan-probe.js [--rounds=9]
 */
import { Client } from 'pg';
import { RESERVE_SQL } from '../../apps/broker/src/sessions/session-reservation.repository';
import { reserveParams } from './reserve-params';
import { startBrokerProcess, startDatabase, startSimulatorProcess } from './stack';
import { median, nowMs, numberArg, round } from './stats';

const ROUNDS = numberArg('rounds', 9);
const AFTER: Array<[string, string]> = [
  ['select1', 'SELECT 1'],
  ['analyze', 'ANALYZE sessions, session_participants'],
  ['truncate', 'TRUNCATE sessions, session_participants, interactions, webhook_events, webhook_deliveries CASCADE'],
];

async function main(): Promise<void> {
  const db = await startDatabase('bench_replan');
  // The broker migrates and seeds the database (accounts, 100 numbers), then leaves it to us.
  const sim = await startSimulatorProcess();
  const broker = await startBrokerProcess(db.url, sim.url, { SIM_SEED_NUMBERS: '100' });
  await broker.stop();
  await sim.stop();
  const warm = new Client({ connectionString: db.url });
  const other = new Client({ connectionString: db.url });
  await warm.connect();
  await other.connect();
  try {
    const accountId = (await warm.query<{ account_id: string }>('SELECT account_id FROM api_keys LIMIT 1')).rows[0].account_id;
    let n = 0;
    const reserve = async (): Promise<number> => {
      n += 1;
      const pair = [`+234803${String(n * 2).padStart(7, '0')}`, `+234803${String(n * 2 + 1).padStart(7, '0')}`] as const;
      await warm.query('BEGIN');
      const t0 = nowMs();
      await warm.query({
        name: 'reserve',
        text: RESERVE_SQL,
        values: reserveParams({ provider: 'primary', accountId, participants: pair }),
      });
      const ms = nowMs() - t0;
      await warm.query('COMMIT');
      return ms;
    };
    for (let i = 0; i < 300; i++) await reserve();
    const out = [];
    for (const [after, sql] of AFTER) {
      const first: number[] = [];
      const next: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        for (let i = 0; i < 30; i++) await reserve();
        await other.query(sql);
        first.push(await reserve());
        next.push(await reserve());
      }
      out.push({ after, firstMedianMs: round(median(first), 2), nextMedianMs: round(median(next), 2) });
    }
    console.log(JSON.stringify({ benchmark: 'replan-probe', rounds: ROUNDS, out }, null, 2));
  } finally {
    await warm.end();
    await other.end();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
