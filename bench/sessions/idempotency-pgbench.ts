/**
 * A create's Idempotency-Key record as SQL alone, with pgbench: the claim (`idempotency.claim`, an autocommit
 * INSERT) and the answer's write (`idempotency.store`), with the NOTIFY in the write's own statement (before
 * issue #19: `UPDATE … RETURNING key, pg_notify(…)`) against the write without it followed by
 * `SELECT pg_notify(…)` as a statement of its own (this build), `--clients` at a time, `--seconds` each, rounds
 * interleaved, the order alternating by round, on one throwaway PostgreSQL with its default, durable settings.
 * Per variant: transactions (claim + store) per second and PostgreSQL's CPU per transaction (/proc). A
 * statement that has called pg_notify takes the database-wide NOTIFY lock at its commit and holds it through
 * the WAL flush.
 *
 * Usage (after the bench's tsc, `npm run bench:sessions` builds it; needs pgbench on PATH or `--pgbench=FILE`):
 *   node dist/bench/bench/sessions/idempotency-pgbench.js [--rounds=6 --seconds=10 --clients=16]
 * Prints one JSON object.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPid, postgresCpuMs } from '../support/cpu';
import { withClient } from '../support/pool-rule';
import { startDatabase } from '../support/stack';
import { median, numberArg, ratio, round } from '../support/stats';
import { prepareDatabase } from '../../apps/broker/src/database/prepare-database';

const ROUNDS = numberArg('rounds', 6);
const SECONDS = numberArg('seconds', 10);
const CLIENTS = numberArg('clients', 16);
const PGBENCH = process.argv.find((a) => a.startsWith('--pgbench='))?.slice(10) ?? 'pgbench';
const ACCOUNT = '00000000-0000-0000-0000-0000000000e1';
const TOPIC = 'a'.repeat(64);

/** The claim of a fresh key (as IdempotencyRepository.claim); `:key` for the answer's write. */
const CLAIM = `
INSERT INTO idempotency_records (account_id, key, request_hash, created_at, expires_at)
  VALUES ('${ACCOUNT}', gen_random_uuid()::text, 'h', '2026-12-01T12:00:00Z', '2026-12-02T12:00:00Z')
  ON CONFLICT (account_id, key) DO NOTHING RETURNING key \\gset
`;
const STORE = `UPDATE idempotency_records SET response_status = 201, response_body = '{"id":"s","status":"active"}'
  WHERE account_id = '${ACCOUNT}' AND key = :key AND created_at = '2026-12-01T12:00:00Z' AND response_status IS NULL
  RETURNING key`;

const VARIANTS: Record<string, string> = {
  notifyInStatement: `${CLAIM}${STORE}, pg_notify('broker_idempotency', '${TOPIC}');\n`,
  notifyAfterCommit: `${CLAIM}${STORE};\nSELECT pg_notify('broker_idempotency', '${TOPIC}');\n`,
};

async function main(): Promise<void> {
  const db = await startDatabase('bench_idempotency_pgbench');
  const dir = await mkdtemp(join(tmpdir(), 'idempotency-pgbench-'));
  try {
    await prepareDatabase(db.url);
    await withClient(db.url, async (c) => {
      await c.query(`INSERT INTO accounts (id, name) VALUES ($1, 'bench')`, [ACCOUNT]);
      await c.query('VACUUM ANALYZE');
    });
    const postmaster = await withClient(db.url, async (c) =>
      parentPid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid),
    );
    for (const [name, script] of Object.entries(VARIANTS)) await writeFile(join(dir, `${name}.sql`), script);
    const url = new URL(db.url);
    const run = (name: string, seconds: number) => {
      const cpu0 = postgresCpuMs(postmaster);
      const out = execFileSync(
        PGBENCH,
        [
          '-n',
          '-M',
          'prepared',
          '-c',
          String(CLIENTS),
          '-j',
          '2',
          '-T',
          String(seconds),
          '-f',
          join(dir, `${name}.sql`),
          '-h',
          url.hostname,
          '-p',
          url.port,
          '-U',
          decodeURIComponent(url.username),
          url.pathname.slice(1),
        ],
        { encoding: 'utf8', env: { ...process.env, PGPASSWORD: decodeURIComponent(url.password) } },
      );
      const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
      const transactions = Number(/number of transactions actually processed: (\d+)/.exec(out)?.[1]);
      const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
      if (!transactions || failed) throw new Error(`pgbench ${name}: ${out}`);
      return { tps: round(tps, 0), postgresCpuMsPerTransaction: round((postgresCpuMs(postmaster) - cpu0) / transactions, 3) };
    };
    for (const name of Object.keys(VARIANTS)) run(name, 2); // warm-up
    const rounds: Array<Record<string, ReturnType<typeof run>>> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const names = Object.keys(VARIANTS);
      const order = r % 2 === 0 ? names : [...names].reverse();
      const result: Record<string, ReturnType<typeof run>> = {};
      for (const name of order) result[name] = run(name, SECONDS);
      rounds.push(result);
      console.error(`round ${r + 1}: ${JSON.stringify(result)} load ${loadavg()[0].toFixed(1)}`);
    }
    const summary = Object.fromEntries(
      (['tps', 'postgresCpuMsPerTransaction'] as const).map((key) => {
        const after = median(rounds.map((x) => x.notifyAfterCommit[key]));
        const inside = median(rounds.map((x) => x.notifyInStatement[key]));
        return [key, { notifyAfterCommit: after, notifyInStatement: inside, ratio: ratio(after, inside) }];
      }),
    );
    console.log(
      JSON.stringify(
        {
          benchmark: 'idempotency claim + store, pgbench',
          database: db.describe,
          clients: CLIENTS,
          seconds: SECONDS,
          summary,
          rounds,
          load: loadavg(),
        },
        null,
        2,
      ),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
    await db.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
