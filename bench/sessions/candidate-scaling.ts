/**
 * How the allocator's choice of proxy number scales with the number of active sessions: its candidate
 * query (copied from apps/broker/src/sessions/session-allocator.ts) orders the eligible numbers by how
 * many active participants each carries, which counts every active participant row of the provider.
 * Sessions are added in bulk (one statement) between measurements; each figure is the median of 30
 * runs of the query, as a multiple of the same query on an empty table (same run).
 */
import type { Client } from 'pg';
import { median, nowMs, ratio, round } from '../support/stats';

const CANDIDATES = `
  SELECT pn.id, pn.number FROM proxy_numbers pn
   WHERE pn.provider = $1 AND pn.enabled AND $2 = ANY(pn.capabilities)
     AND NOT EXISTS (SELECT 1 FROM session_participants sp
                      WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.number = ANY($3::text[]))
   ORDER BY (SELECT count(*) FROM session_participants sp WHERE sp.proxy_number_id = pn.id AND sp.active), pn.number
   LIMIT 1`;

/** Active sessions spread evenly over the primary's numbers, participants never reused. */
const BULK = `
  WITH pn AS (SELECT id, number, row_number() OVER (ORDER BY number) - 1 AS k, count(*) OVER () AS n FROM proxy_numbers WHERE provider = 'primary'),
  s AS (
    INSERT INTO sessions (account_id, channel, status, provider, proxy_number_id, proxy_number, participants, expires_at)
    SELECT $1, 'sms', 'active', 'primary', pn.id, pn.number,
           ARRAY['+45' || lpad((g * 2)::text, 10, '0'), '+45' || lpad((g * 2 + 1)::text, 10, '0')], now() + interval '1 hour'
      FROM generate_series($2::int, $3::int - 1) g JOIN pn ON pn.k = g % pn.n
    RETURNING id, proxy_number_id, participants, expires_at)
  INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at)
  SELECT s.id, unnest(s.participants), s.proxy_number_id, true, s.expires_at FROM s`;

export async function candidateScaling(client: Client, accountId: string, steps = [0, 10_000, 50_000, 100_000]) {
  const time = async () => {
    const samples: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t0 = nowMs();
      await client.query(CANDIDATES, ['primary', 'sms', ['+447000000001', '+447000000002']]);
      samples.push(nowMs() - t0);
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
