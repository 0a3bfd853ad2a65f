/**
 * The SQL of a reservation: a proxy number and a `pending` session for two participants, the
 * removal of a reservation whose binding failed, and the freeing of participants whose sessions
 * passed their expiresAt unswept. SessionAllocator decides when; this class only talks to PostgreSQL.
 *
 * A reservation is one statement (RESERVE_SQL). It picks a shared number only where the account
 * holds fewer than SESSION_PARTICIPANT_LIMIT shared-pool sessions with both participants, and gives
 * each participant row the lowest free slot of 1..limit for (account, number). A partial unique
 * index on the slots makes the limit exact under concurrent creates on any number of replicas: two
 * creates that both saw room for one more take the same slot, and the second one's insert fails
 * (a unique violation, retried by SessionAllocator: it then sees the limit reached).
 *
 * Both the limit and the slot search read only the participant rows' own `account_id` and
 * `shared_slot` (a slot is given exactly when the number was shared at reservation), through the
 * slots' index: no join to sessions or proxy_numbers. The lowest free slot is looked for among 1 and
 * each taken slot + 1, so its cost follows the slots held, not the limit (a `generate_series` over
 * 1..limit probed the index once per slot: 1 000 probes per participant at a limit of 1 000).
 *
 * The reservation commits without waiting for its WAL flush (`synchronous_commit` off for its own
 * transaction only: RESERVE_SQL runs alone, never inside a wider transaction). No answer depends on
 * it alone: a 201 follows the activation, whose synchronous commit flushes the WAL up to itself, so
 * the reservation's too (WAL is flushed in order). A crash of PostgreSQL within the flush delay may
 * lose a reservation whose create has not answered yet: that create fails (its activation finds no
 * database, then no pending row), as it would if the crash came a moment earlier; visibility to other
 * creates (the pool rule, the limit's slots) is at commit either way. One WAL flush less per create.
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Channel } from '../numbers/proxy-number.entity';

/** The participant rows (`sp`) an account holds on the shared pool for the given numbers: what the limit counts. */
const heldOnSharedPool = (account: string, numbers: string) =>
  `sp.account_id = ${account} AND sp.number = ANY(${numbers}::text[]) AND sp.active AND sp.shared_slot IS NOT NULL AND sp.expires_at > now()`;

/**
 * One statement: the first eligible number (enabled, channel-capable, neither participant active on
 * it, and either dedicated to this account or shared while the account is under its participant
 * limit with both numbers) with dedicated numbers first and then in load order; the pending session
 * and its two participant rows.
 */
export const RESERVE_SQL = `/* session.reserve */
  WITH candidate AS (
    SELECT pn.id, pn.number, pn.account_id IS NULL AS shared FROM proxy_numbers pn
     WHERE pn.provider = $1 AND pn.enabled AND $2 = ANY(pn.capabilities)
       AND NOT EXISTS (SELECT 1 FROM session_participants sp
                        WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.expires_at > now() AND sp.number = ANY($3::text[]))
       AND (pn.account_id = $5 OR (pn.account_id IS NULL AND NOT EXISTS (
             SELECT 1 FROM session_participants sp
              WHERE ${heldOnSharedPool('$5', '$3')}
              GROUP BY sp.number HAVING count(*) >= $11)))
     ORDER BY pn.account_id IS NULL, array_position($4::uuid[], pn.id) NULLS FIRST, pn.number
     LIMIT 1
  ), reserved AS (
    INSERT INTO sessions (account_id, channel, status, provider, proxy_number_id, proxy_number, participants, callback_url, metadata, expires_at, idempotency_key)
    SELECT $5, $2, 'pending', $1, c.id, c.number, $6, $7, $8, now() + make_interval(secs => $9), $10 FROM candidate c
    RETURNING id, proxy_number_id, proxy_number, created_at, expires_at
  ), participants AS (
    INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, account_id, shared_slot)
    SELECT r.id, n, r.proxy_number_id, true, r.expires_at, $5,
           CASE WHEN c.shared THEN (
             SELECT min(g) FROM (SELECT 1 AS g UNION ALL
                                 SELECT t.shared_slot + 1 FROM session_participants t
                                  WHERE t.account_id = $5 AND t.number = n AND t.active AND t.shared_slot IS NOT NULL AND t.expires_at > now()) g
              WHERE g <= $11::int AND NOT EXISTS (SELECT 1 FROM session_participants x
                                 WHERE x.account_id = $5 AND x.number = n AND x.active AND x.expires_at > now() AND x.shared_slot = g)) END
      FROM reserved r, candidate c, unnest($3::text[]) AS n
  )
  SELECT id, proxy_number_id, proxy_number, created_at, expires_at
    FROM reserved, (SELECT set_config('synchronous_commit', 'off', true)) AS commit_without_flush`;

export interface ReservationRow {
  id: string;
  proxyNumberId: string;
  proxyNumber: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface ReservationInput {
  accountId: string;
  provider: string;
  channel: Channel;
  /** Sorted, so two creates for the same pair take the index entries in the same order. */
  sortedNumbers: string[];
  participants: [string, string];
  /** Proxy number ids, least loaded first. */
  loadOrder: string[];
  ttlSeconds: number;
  callbackUrl: string | null;
  metadata: Record<string, unknown>;
  idempotencyKey: string | null;
  participantLimit: number;
}

/** A participant number the account holds `held` shared-pool sessions with, at or above the limit. */
export interface HeldParticipant {
  number: string;
  held: number;
}

export type ReservationResult = { reserved: ReservationRow } | { reserved: null; overLimit: HeldParticipant | null };

interface RawReservation {
  id: string;
  proxy_number_id: string;
  proxy_number: string;
  created_at: Date;
  expires_at: Date;
}

@Injectable()
export class SessionReservationRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Reserves; when nothing was free, says whether the participant limit was why. */
  async reserve(input: ReservationInput): Promise<ReservationResult> {
    const rows: RawReservation[] = await this.dataSource.query(RESERVE_SQL, [
      input.provider,
      input.channel,
      input.sortedNumbers,
      input.loadOrder,
      input.accountId,
      input.participants,
      input.callbackUrl,
      JSON.stringify(input.metadata),
      input.ttlSeconds,
      input.idempotencyKey,
      input.participantLimit,
    ]);
    if (rows.length === 0) return { reserved: null, overLimit: await this.overLimit(input) };
    const [row] = rows;
    return {
      reserved: {
        id: row.id,
        proxyNumberId: row.proxy_number_id,
        proxyNumber: row.proxy_number,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
      },
    };
  }

  /** Removes a reservation whose binding failed: nothing half-made is left behind. */
  async release(sessionId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM sessions WHERE id = $1 AND status = 'pending'`, [sessionId]);
  }

  /**
   * A session is inactive from expiresAt on, swept or not: its participants' rows stop counting, on
   * this provider's numbers (the pool rule) and in this account's slots (the participant limit).
   */
  async freeExpired(provider: string, accountId: string, numbers: string[]): Promise<void> {
    await this.dataSource.query(
      `UPDATE session_participants sp SET active = false
        WHERE sp.active AND sp.expires_at <= now() AND sp.number = ANY($2::text[])
          AND (sp.account_id = $3 OR sp.proxy_number_id IN (SELECT id FROM proxy_numbers WHERE provider = $1))`,
      [provider, numbers, accountId],
    );
  }

  private async overLimit(input: ReservationInput): Promise<HeldParticipant | null> {
    const rows: Array<{ number: string; held: number }> = await this.dataSource.query(
      `SELECT sp.number, count(*)::int AS held FROM session_participants sp
        WHERE ${heldOnSharedPool('$1', '$2')}
        GROUP BY sp.number HAVING count(*) >= $3
        ORDER BY sp.number LIMIT 1`,
      [input.accountId, input.sortedNumbers, input.participantLimit],
    );
    return rows[0] ?? null;
  }
}
