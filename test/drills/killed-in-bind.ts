/**
 * The crash drill of a single create (issue #13): a create stalled in the provider's bind (simulator
 * latency) is killed with kill -9, the broker is restarted on the same port, and the create is retried
 * with the same Idempotency-Key and body. Two moments of the kill:
 *
 * - `in-bind`: while the bind waits on the simulator; the reservation is pending, nothing is activated.
 * - `activated-unanswered`: after the activation committed, before the answer was kept: the drill holds a
 *   row lock on the key's idempotency record, so the broker's write of the answer waits; the broker is
 *   killed and that waiting statement is cancelled (as if the machine died with it), then the lock let go.
 *
 * What must hold: the retry answers 201 once the takeover lease has passed (not a 409 for 24 h), with the
 * session the dead create had activated when it had, exactly one active session with the key, and no
 * reservation of the dead create left pending in the pool.
 */
import { Client } from 'pg';
import { BENCH_API_KEY, setFault, startBrokerProcess, waitFor, type BenchDatabase, type SimulatorProcess } from '../../bench/support/stack';
import { withClient } from '../../bench/support/pool-rule';
import { nowMs, round } from '../../bench/support/stats';

interface KeyState {
  sessions: Array<{ id: string; status: string }>;
  claimedAt: Date | null;
  answered: boolean;
}

async function keyState(db: Pick<BenchDatabase, 'url'>, key: string): Promise<KeyState> {
  return withClient(db.url, async (c) => {
    const sessions = await c.query<{ id: string; status: string }>(
      'SELECT id, status FROM sessions WHERE idempotency_key = $1 ORDER BY created_at',
      [key],
    );
    const record = await c.query<{ created_at: Date; response_status: number | null }>(
      'SELECT created_at, response_status FROM idempotency_records WHERE key = $1',
      [key],
    );
    return { sessions: sessions.rows, claimedAt: record.rows[0]?.created_at ?? null, answered: record.rows[0]?.response_status != null };
  });
}

function keyedCreate(url: string, key: string, body: string): Promise<Response> {
  return fetch(`${url}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json', 'idempotency-key': key },
    body,
  });
}

export interface KilledInBindOptions {
  db: Pick<BenchDatabase, 'url'>;
  sim: Pick<SimulatorProcess, 'url'>;
  /** The port the broker is started (and restarted) on. */
  port: number;
  /** The broker's environment: `PROVIDER_CALL_TIMEOUT_MS` sets the lease; the simulator's two providers. */
  env: Record<string, string>;
  stage: 'in-bind' | 'activated-unanswered';
  /** Makes the participants unique per case. */
  n: number;
}

export async function killedInBind(options: KilledInBindOptions) {
  const { db, sim, port, env, stage, n } = options;
  const timeoutMs = Number(env.PROVIDER_CALL_TIMEOUT_MS);
  // As IdempotencyService derives it: every provider (primary and failover) up to its timeout, one more, and 5 s.
  const leaseMs = timeoutMs * 3 + 5_000;
  const key = `drill-bind-${stage}-${n}-${process.pid}`;
  const body = JSON.stringify({
    channel: 'sms',
    participants: [{ number: `+23480399${String(n).padStart(4, '0')}1` }, { number: `+23480399${String(n).padStart(4, '0')}2` }],
  });
  let broker = await startBrokerProcess(db.url, sim.url, env, { port });
  // Slower than a poll of the database, faster than the call timeout: the bind succeeds if left alone.
  await setFault(sim.url, 'primary', { mode: 'ok', latencyMs: Math.round(timeoutMs * 0.8) });
  const locker = new Client({ connectionString: db.url });
  await locker.connect();
  let atKill: KeyState;
  try {
    const first = keyedCreate(broker.url, key, body).catch(() => null);
    if (stage === 'in-bind') {
      await waitFor('reservation pending', async () => (await keyState(db, key)).sessions.some((s) => s.status === 'pending'), 1000, 5);
    } else {
      await waitFor('key claimed', async () => (await keyState(db, key)).claimedAt !== null, 1000, 5);
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM idempotency_records WHERE key = $1 FOR UPDATE', [key]);
      await waitFor('activation committed', async () => (await keyState(db, key)).sessions.some((s) => s.status === 'active'), 400, 10);
      await waitFor('answer write waiting on the lock', async () => (await waitingOnLock(locker)).length > 0, 400, 10);
    }
    await broker.kill9();
    if (stage === 'activated-unanswered') {
      // A statement PostgreSQL already holds would still commit after its client died: cancel it, as a dead machine would.
      for (const pid of await waitingOnLock(locker)) await locker.query('SELECT pg_terminate_backend($1)', [pid]);
    }
    await locker.query('ROLLBACK');
    atKill = await keyState(db, key);
    await first;
  } finally {
    if (broker.running()) await broker.kill9();
    await locker.end();
    await setFault(sim.url, 'primary', { mode: 'ok', latencyMs: 0 });
  }
  broker = await startBrokerProcess(db.url, sim.url, env, { port });
  let retry: { status: number; id?: string; ms: number; answeredAfterClaimMs: number };
  let after: KeyState;
  try {
    const retryStarted = nowMs();
    const res = await keyedCreate(broker.url, key, body);
    const answer = (await res.json()) as { id?: string };
    retry = {
      status: res.status,
      id: answer.id,
      ms: round(nowMs() - retryStarted),
      answeredAfterClaimMs: Date.now() - atKill.claimedAt!.getTime(),
    };
    after = await keyState(db, key);
  } finally {
    await broker.stop();
  }
  const activatedAtKill = atKill.sessions.find((s) => s.status === 'active')?.id ?? null;
  const active = after.sessions.filter((s) => s.status === 'active');
  const pendingAfterRetry = after.sessions.filter((s) => s.status === 'pending').length;
  const killedWhere =
    stage === 'in-bind' ? atKill.sessions.every((s) => s.status === 'pending') : activatedAtKill !== null && !atKill.answered;
  return {
    stage,
    atKill: { sessions: atKill.sessions.map((s) => s.status), answerKept: atKill.answered },
    killedWhereIntended: killedWhere,
    retry: { status: retry.status, ms: retry.ms, answeredAfterClaimMs: retry.answeredAfterClaimMs },
    takeoverLeaseMs: leaseMs,
    answeredWithinLeasePlusOneCreate: retry.answeredAfterClaimMs <= leaseMs + timeoutMs * 2,
    sameSessionAsActivated: activatedAtKill === null ? null : retry.id === activatedAtKill,
    activeSessionsWithKey: active.length,
    answeredSessionIsTheActiveOne: active.length === 1 && active[0].id === retry.id,
    pendingReservationsWithKeyAfterRetry: pendingAfterRetry,
  };
}

/** Backends (not `locker`'s) whose statement on idempotency_records waits for a lock. */
async function waitingOnLock(locker: Client): Promise<number[]> {
  const { rows } = await locker.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND query LIKE '%UPDATE idempotency_records%'`,
  );
  return rows.map((r) => r.pid);
}

/** Every check of one case, timing included (drills only; tests leave the timing out). */
export function killedInBindOk(result: Awaited<ReturnType<typeof killedInBind>>): boolean {
  return (
    result.killedWhereIntended &&
    result.retry.status === 201 &&
    result.answeredWithinLeasePlusOneCreate &&
    result.answeredSessionIsTheActiveOne &&
    result.sameSessionAsActivated !== false &&
    result.pendingReservationsWithKeyAfterRetry === 0
  );
}
