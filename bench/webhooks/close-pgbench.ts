/**
 * A session close's transaction as SQL alone, with pgbench: the statements `SessionsService.close` sends (lock
 * the session, end it, free its participants, the outbox's INSERT of `session.closed` and its delivery), with
 * the NOTIFY inside the transaction (the outbox before issue #19: `SELECT url, pg_notify(…) FROM dl`) against
 * the same transaction without it followed by `SELECT pg_notify(…)` after the COMMIT (this build), `--clients`
 * at a time, `--seconds` each, rounds interleaved, the order alternating by round, on one throwaway PostgreSQL
 * with its default, durable settings. Per variant: transactions per second (pgbench's figure, the wake
 * included) and PostgreSQL's CPU per transaction (/proc). A transaction that has called pg_notify takes the
 * database-wide NOTIFY lock in its pre-commit and holds it through its commit's WAL flush.
 *
 * Usage (after the bench's tsc; needs pgbench on PATH or `--pgbench=FILE`):
 *   node dist/bench/bench/webhooks/close-pgbench.js [--rounds=6 --seconds=10 --clients=16 --sessions=5000]
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
const SESSIONS = numberArg('sessions', 5000);
const PGBENCH = process.argv.find((a) => a.startsWith('--pgbench='))?.slice(10) ?? 'pgbench';
const ACCOUNT = '00000000-0000-0000-0000-0000000000d1';

/** The close's statements; `:id` is a random session (closing a closed one again costs the same writes). */
const CLOSE = `
\\set n random(1, ${SESSIONS})
BEGIN;
SELECT s.id AS id FROM sessions s JOIN bench_close_ids b ON b.id = s.id WHERE b.n = :n FOR UPDATE OF s \\gset
UPDATE sessions SET status = 'closed', ended_at = now() WHERE id = :id::uuid;
UPDATE session_participants SET active = false WHERE session_id = :id::uuid;
WITH target AS (
  SELECT COALESCE('https://hooks.example/closed'::text, (SELECT default_callback_url FROM accounts WHERE id = '${ACCOUNT}')) AS url
), ev AS (
  INSERT INTO webhook_events (id, account_id, session_id, type, data, created_at)
  VALUES (gen_random_uuid(), '${ACCOUNT}', :id::uuid, 'session.closed', '{"session":{"status":"closed"},"receivedAt":"2026-12-01T12:00:00Z"}', now())
  RETURNING id
), dl AS (
  INSERT INTO webhook_deliveries (id, event_id, account_id, kind, url, status, attempts, next_attempt_at, expires_at, created_at, updated_at)
  SELECT gen_random_uuid(), ev.id, '${ACCOUNT}', 'account', t.url, 'pending', 0, now(), now() + interval '72 hours', now(), now()
    FROM target t, ev WHERE t.url IS NOT NULL
  RETURNING url
)
`;

/** This build's shape first: the summary's ratio is it over the other. */
const VARIANTS: Record<string, string> = {
  notifyAfterCommit: `${CLOSE}SELECT url FROM dl \\gset\nCOMMIT;\nSELECT pg_notify('webhook_delivery', :url::text);\n`,
  notifyInside: `${CLOSE}SELECT url, pg_notify('webhook_delivery', url) FROM dl;\nCOMMIT;\n`,
};

async function main(): Promise<void> {
  const db = await startDatabase('bench_close_pgbench');
  try {
    await prepareDatabase(db.url);
    await withClient(db.url, async (c) => {
      await c.query(`INSERT INTO accounts (id, name) VALUES ($1, 'bench')`, [ACCOUNT]);
      await c.query(
        `INSERT INTO proxy_numbers (provider, number) SELECT 'p', '+23490' || lpad(n::text, 8, '0') FROM generate_series(1, 100) n`,
      );
      // Active sessions with a participant pair each, as reservations leave them (the reservation's own function).
      await c.query(
        `SELECT broker_reserve_session('p', '{sms}', ARRAY[a, b], ARRAY[]::uuid[], $1::uuid, ARRAY[a, b], NULL, '{}', 3600, NULL, 1000,
                                         now(), NULL, NULL, NULL, false, 86400, gen_random_uuid(), 'pending')
           FROM (SELECT '+234807' || lpad((2 * n)::text, 7, '0') AS a, '+234807' || lpad((2 * n + 1)::text, 7, '0') AS b
                   FROM generate_series(1, $2::int) n) p`,
        [ACCOUNT, SESSIONS],
      );
      await c.query(`UPDATE sessions SET status = 'active', binding_id = 'b-' || id WHERE status = 'pending'`);
      await c.query(`CREATE TABLE bench_close_ids AS SELECT row_number() OVER (ORDER BY id)::int AS n, id FROM sessions`);
      await c.query(`CREATE UNIQUE INDEX ON bench_close_ids (n)`);
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
    console.log(JSON.stringify({ benchmark: 'close transaction, pgbench', database: db.describe, ...figures }, null, 2));
  } finally {
    await db.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
