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
import { pgbenchAb } from '../support/pgbench-ab';
import { withClient } from '../support/pool-rule';
import { startDatabase } from '../support/stack';
import { numberArg } from '../support/stats';
import { prepareDatabase } from '../../apps/broker/src/prepare-database';

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

/** This build's shape first: the summary's ratio is it over the other. */
const VARIANTS: Record<string, string> = {
  notifyAfterCommit: `${CLAIM}${STORE};\nSELECT pg_notify('broker_idempotency', '${TOPIC}');\n`,
  notifyInStatement: `${CLAIM}${STORE}, pg_notify('broker_idempotency', '${TOPIC}');\n`,
};

async function main(): Promise<void> {
  const db = await startDatabase('bench_idempotency_pgbench');
  try {
    await prepareDatabase(db.url);
    await withClient(db.url, async (c) => {
      await c.query(`INSERT INTO accounts (id, name) VALUES ($1, 'bench')`, [ACCOUNT]);
      await c.query('VACUUM ANALYZE');
    });
    const figures = await pgbenchAb({
      databaseUrl: db.url,
      variants: VARIANTS,
      rounds: ROUNDS,
      seconds: SECONDS,
      clients: CLIENTS,
      pgbench: PGBENCH,
    });
    console.log(JSON.stringify({ benchmark: 'idempotency claim + store, pgbench', database: db.describe, ...figures }, null, 2));
  } finally {
    await db.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
