/**
 * The SQL of the broker sessions that carry Twilio Proxy Sessions: a reservation of one of the Service's
 * numbers for the participants known so far (the first alone: a hold; both: the pair), on one provider, and
 * its release. A reservation is a `pending` broker session with the Proxy Session's id and one participant
 * row per participant, so the pool rule holds from the first participant on: the partial unique index on
 * `session_participants (proxy_number_id, number) WHERE active` is what two concurrent reservations, on any
 * replica, cannot both pass (the loser's insert fails, and the caller picks again). `pending_until` keeps a
 * hold from the sweeper's stale-reservation drop until the session's own deadline.
 *
 * Only the Service's numbers are candidates (dedicated to the account, so they take no slot of the shared
 * pool's participant limit), never a reserved one unless asked for by id: Twilio Proxy's pool. Within them:
 * the number to keep (the hold's, so the first participant's proxy identifier stays as it was told) first,
 * then the first participant's most recent number with the account first (`prefer-sticky`) or last
 * (`avoid-sticky`), then the least loaded, then the number.
 */
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { uuidArrayLiteral } from '@app/database';
import type { Channel } from '../../../numbers/proxy-number.entity';
import type { NumberSelectionBehavior } from '../services/proxy-service.entity';

export interface ProxyReservationInput {
  /** The Proxy Session's id: the broker session gets it too. */
  readonly sessionId: string;
  readonly accountId: string;
  readonly serviceId: string;
  readonly provider: string;
  readonly channels: Channel[];
  /** In the order they were added: the session's `participants`. */
  readonly participants: string[];
  /** Only this number (a participant asked for it); null: the pool's choice. */
  readonly onlyNumberId: string | null;
  /** Ranked first when it can take them all (the hold's number); null: none. */
  readonly keepNumberId: string | null;
  readonly selection: NumberSelectionBehavior;
  /** The provider's proxy number ids, least loaded first (PoolUsage). */
  readonly loadOrder: string[];
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly inactiveAt: Date;
  readonly idleTtlSeconds: number | null;
  readonly interceptUrl: string | null;
  /** The broker's clock: the moment the pool rule is read at. */
  readonly now: Date;
}

export interface ProxyReservation {
  readonly proxyNumberId: string;
  readonly proxyNumber: string;
}

const RESERVE_SQL = `/* twilio-proxy.reserve */
  WITH sticky AS (
    SELECT h.proxy_number_id AS id FROM session_participants h
     WHERE h.account_id = $2 AND h.number = ($11::text[])[1]
     ORDER BY h.created_at DESC LIMIT 1
  ), candidate AS (
    SELECT pn.id, pn.number
      FROM twilio_proxy_phone_numbers spn
      JOIN proxy_numbers pn ON pn.id = spn.proxy_number_id
      LEFT JOIN unnest($9::uuid[]) WITH ORDINALITY AS lo(number_id, load_rank) ON lo.number_id = pn.id
     WHERE spn.service_id = $1 AND pn.account_id = $2 AND pn.provider = $3 AND pn.enabled AND $4::text[] <@ pn.capabilities
       AND (CASE WHEN $5::uuid IS NULL THEN NOT spn.is_reserved ELSE pn.id = $5::uuid END)
       AND NOT EXISTS (SELECT 1 FROM session_participants sp
                        WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.expires_at > $6 AND sp.number = ANY($12::text[]))
     ORDER BY pn.id IS NOT DISTINCT FROM $7::uuid DESC,
              CASE WHEN pn.id IN (SELECT id FROM sticky) THEN (CASE WHEN $8 = 'prefer-sticky' THEN 0 ELSE 2 END) ELSE 1 END,
              lo.load_rank NULLS FIRST, pn.number
     LIMIT 1
  ), ins AS (
    INSERT INTO sessions (id, account_id, channels, status, provider, proxy_number_id, proxy_number, participants, metadata,
                          created_at, expires_at, inactive_at, idle_ttl_seconds, intercept_url, pending_until)
    SELECT $10, $2, $4, 'pending', $3, c.id, c.number, $11, '{}', $13, $14, $15, $16, $17, $15 FROM candidate c
    RETURNING proxy_number_id, proxy_number
  ), rows AS (
    INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, account_id, shared_slot, created_at, partner)
    SELECT $10, n, i.proxy_number_id, true, $15, $2, NULL, $6,
           -- The other participant ('' while the Session holds one: the number quarantine then holds the row from all).
           COALESCE((SELECT o FROM unnest($11::text[]) AS o WHERE o <> n LIMIT 1), '')
      FROM ins i, unnest($12::text[]) AS n
  )
  SELECT proxy_number_id, proxy_number FROM ins`;

/**
 * New expiry rules for a live carrier (pending or active, before its deadline at \`$4\`): its hard limit, its idle
 * TTL, and so its deadline, from its last interaction (or its creation), never past the hard limit; a hold's
 * \`pending_until\` follows it; its active participant rows take the deadline's copy, as an interaction's does.
 */
const RESCHEDULE_SQL = `/* twilio-proxy.reschedule */
  WITH s AS (
    UPDATE sessions
       SET expires_at = $3, idle_ttl_seconds = $2::integer,
           inactive_at = least($3::timestamptz, COALESCE(last_interaction_at, created_at) + make_interval(secs => $2::integer)),
           pending_until = CASE WHEN status = 'pending'
                                THEN least($3::timestamptz, COALESCE(last_interaction_at, created_at) + make_interval(secs => $2::integer)) END
     WHERE id = $1 AND status IN ('pending', 'active') AND inactive_at > $4
    RETURNING id, inactive_at
  )
  UPDATE session_participants sp SET expires_at = s.inactive_at FROM s WHERE sp.session_id = s.id AND sp.active`;

@Injectable()
export class ProxyReservationRepository {
  /**
   * Reserves in `manager`'s transaction; null when none of the Service's numbers on the provider can take
   * these participants. A concurrent reservation that took the same number for one of them makes this fail
   * with a unique violation on the pool rule's index: the caller's transaction is then retried.
   */
  async reserve(manager: EntityManager, input: ProxyReservationInput): Promise<ProxyReservation | null> {
    // Sorted, so two reservations for the same people take the index entries in the same order.
    const sorted = [...input.participants].sort();
    const rows = await manager.query<Array<{ proxy_number_id: string; proxy_number: string }>>(RESERVE_SQL, [
      input.serviceId,
      input.accountId,
      input.provider,
      input.channels,
      input.onlyNumberId,
      input.now,
      input.keepNumberId,
      input.selection,
      uuidArrayLiteral(input.loadOrder),
      input.sessionId,
      input.participants,
      sorted,
      input.createdAt,
      input.expiresAt,
      input.inactiveAt,
      input.idleTtlSeconds,
      input.interceptUrl,
    ]);
    return rows.length > 0 ? { proxyNumberId: rows[0].proxy_number_id, proxyNumber: rows[0].proxy_number } : null;
  }

  async reschedule(
    manager: EntityManager,
    sessionId: string,
    change: { idleTtlSeconds: number | null; expiresAt: Date; now: Date },
  ): Promise<void> {
    await manager.query(RESCHEDULE_SQL, [sessionId, change.idleTtlSeconds, change.expiresAt, change.now]);
  }

  /**
   * A participant row past its deadline no longer counts, swept or not: these people's lapsed rows are marked so,
   * where one stands in the way of a reservation (the pool rule's index holds every row still marked active).
   */
  async freeLapsed(manager: EntityManager, numbers: string[], now: Date): Promise<void> {
    await manager.query(
      `/* twilio-proxy.free_lapsed */ UPDATE session_participants SET active = false WHERE active AND expires_at <= $2 AND number = ANY($1::text[])`,
      [numbers, now],
    );
  }

  /** Drops the session's reservation (hold or pair), if it is still pending: its participants are free again. */
  async release(manager: EntityManager, sessionId: string): Promise<void> {
    await manager.query(`/* twilio-proxy.release */ DELETE FROM sessions WHERE id = $1 AND status = 'pending'`, [sessionId]);
  }
}
