/**
 * Checks on what the database holds, read straight from PostgreSQL rather than through the broker:
 * the pool rule (docs/design.md#sessions-and-the-pool-rule) and whether given sessions exist.
 */
import { Client } from 'pg';

export interface PoolRuleReport {
  /** (proxy number, participant) pairs in more than one live active session: must be 0. */
  violations: number;
  /** Live active sessions whose participants are not marked active, so the unique index would not guard them: must be 0. */
  unguarded: number;
  activeSessions: number;
}

export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The rule stated on sessions themselves, not on the participant flags the index covers. */
export function checkPoolRule(url: string): Promise<PoolRuleReport> {
  return withClient(url, async (client) => {
    const violations = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT s.proxy_number_id, p.number FROM sessions s CROSS JOIN LATERAL unnest(s.participants) AS p(number)
          WHERE s.status = 'active' AND s.expires_at > now()
          GROUP BY 1, 2 HAVING count(*) > 1) v`,
    );
    const unguarded = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sessions s
        WHERE s.status = 'active' AND s.expires_at > now()
          AND (SELECT count(*) FROM session_participants sp WHERE sp.session_id = s.id AND sp.active) <> 2`,
    );
    const active = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sessions WHERE status = 'active' AND expires_at > now()`,
    );
    return { violations: violations.rows[0].n, unguarded: unguarded.rows[0].n, activeSessions: active.rows[0].n };
  });
}

/** Of `ids`, those with no active session row in the database. */
export function missingSessions(url: string, ids: string[]): Promise<string[]> {
  return withClient(url, async (client) => {
    const found = await client.query<{ id: string }>(`SELECT id FROM sessions WHERE id = ANY($1::uuid[]) AND status = 'active'`, [ids]);
    const present = new Set(found.rows.map((r) => r.id));
    return ids.filter((id) => !present.has(id));
  });
}

/**
 * Removes every session (and what hangs off it) so the next measured phase starts on the same tables.
 * The emptied tables are not analyzed: statistics saying "empty" would make every backend plan the
 * foreign-key checks into sessions as sequential scans, kept for the phase while the table grows
 * (2 scans of half the phase's sessions per create), a cost no long-running database pays. After the
 * truncation PostgreSQL knows their size as unknown and plans them as a table of some pages.
 */
export function resetSessions(url: string): Promise<void> {
  return withClient(url, async (client) => {
    await client.query('TRUNCATE sessions, session_participants, interactions, webhook_events, webhook_deliveries CASCADE');
    await client.query('ANALYZE proxy_numbers');
  });
}
