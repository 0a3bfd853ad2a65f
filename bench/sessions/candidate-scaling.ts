/**
 * How the allocator's reservation scales with the number of active sessions: the allocator's own
 * statement (`RESERVE_SQL`, run as it is, inside a transaction that is rolled back so the table does
 * not change between samples). Sessions are added in bulk (one statement) between measurements; each
 * figure is the median of 30 runs, as a multiple of the same statement on an empty table (same run).
 */
import type { Client } from 'pg';
import { RESERVE_SQL } from '../../apps/broker/src/sessions/session-allocator';
import { median, nowMs, ratio, round } from '../support/stats';
import { reserveParams } from '../support/reserve-params';

/** Active sessions spread evenly over the primary's numbers, participants never reused. */
const BULK = `
  WITH pn AS (SELECT id, number, row_number() OVER (ORDER BY number) - 1 AS k, count(*) OVER () AS n FROM proxy_numbers WHERE provider = 'primary'),
  s AS (
    INSERT INTO sessions (account_id, channels, status, provider, proxy_number_id, proxy_number, participants, expires_at, inactive_at)
    SELECT $1, '{sms}', 'active', 'primary', pn.id, pn.number,
           ARRAY['+45' || lpad((g * 2)::text, 10, '0'), '+45' || lpad((g * 2 + 1)::text, 10, '0')], now() + interval '1 hour',
           now() + interval '1 hour'
      FROM generate_series($2::int, $3::int - 1) g JOIN pn ON pn.k = g % pn.n
    RETURNING id, proxy_number_id, participants, expires_at)
  INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at)
  SELECT s.id, unnest(s.participants), s.proxy_number_id, true, s.expires_at FROM s`;

export async function candidateScaling(client: Client, accountId: string, steps = [0, 10_000, 50_000, 100_000]) {
  const time = async () => {
    const samples: number[] = [];
    for (let i = 0; i < 30; i++) {
      const pair = ['+447000000001', '+447000000002'] as const;
      await client.query('BEGIN');
      const t0 = nowMs();
      await client.query(RESERVE_SQL, reserveParams({ provider: 'primary', accountId, participants: pair, participantLimit: 3 }));
      samples.push(nowMs() - t0);
      await client.query('ROLLBACK');
    }
    return median(samples);
  };
  let total = 0;
  const rows: Array<{ activeSessions: number; medianMs: number; vsEmpty: number }> = [];
  let empty = NaN;
  for (const target of steps) {
    if (target > total) {
      await client.query(BULK, [accountId, total, target]);
      await client.query('VACUUM ANALYZE sessions, session_participants');
      total = target;
    }
    const ms = await time();
    if (rows.length === 0) empty = ms;
    rows.push({ activeSessions: total, medianMs: round(ms, 2), vsEmpty: ratio(ms, empty) });
  }
  return rows;
}
