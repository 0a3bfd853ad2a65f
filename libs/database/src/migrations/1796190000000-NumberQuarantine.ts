import type { MigrationInterface, QueryRunner } from 'typeorm';
import { RESERVE_FUNCTION as CONVERSATION_RESERVE_FUNCTION } from './1796120000000-ConversationSessions';

/**
 * The proxy-number quarantine (issue #29 item 4, SESSION_NUMBER_QUARANTINE_SECONDS): a proxy number and a
 * participant who shared a session are not paired with anyone else for a while after it ends, so a text sent
 * to an old masked number never reaches a stranger (the same two people may share the number again).
 *
 * Each participant row learns its `partner` (the session's other participant; '' where a row's session does not name
 * two, which then matches nobody: held from all), and its `expires_at` is the
 * moment the participant stopped being in the session: the session's inactiveAt while it runs (as before),
 * and its end when it was closed sooner (written by the close from now on; existing closed rows are set here).
 * The quarantine of a row is then `expires_at` .. `expires_at` + the quarantine, read through one index on
 * `(number, expires_at)`: a participant's rows of the last quarantine, whatever the table holds. That index
 * takes the place of `idx_active_participant_number` (number, active rows only), whose readers it serves.
 *
 * `broker_reserve_session` takes the quarantine's length (`p_quarantine_seconds`, from the broker's config;
 * the moment it counts back from is `p_now`, the broker's clock) and leaves out every number on which either
 * participant had, within it, a session with someone other than the other one. The check is in the
 * reservation's own statement, so replicas cannot race past it: a close and a reservation see each other's
 * rows either as live (the pool rule keeps the number) or as ended within the quarantine. When nothing was
 * reserved, `quarantined` says how many of the provider's numbers the quarantine held for these participants.
 * The previous signature is dropped: replicas of the previous version cannot create sessions on this schema
 * (their participant rows would have no partner); stop them before migrating.
 *
 * `IF NOT EXISTS`: on a large table an operator may build the index beforehand with `CREATE INDEX CONCURRENTLY`.
 */
export class NumberQuarantine1796190000000 implements MigrationInterface {
  name = 'NumberQuarantine1796190000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "session_participants" ADD "partner" text');
    await queryRunner.query(
      `UPDATE "session_participants" sp
          SET "partner" = COALESCE(CASE WHEN s."participants"[1] = sp."number" THEN s."participants"[2] ELSE s."participants"[1] END, ''),
              "expires_at" = CASE WHEN s."ended_at" IS NOT NULL AND NOT sp."active" THEN least(sp."expires_at", s."ended_at")
                                  ELSE sp."expires_at" END
         FROM "sessions" s WHERE s."id" = sp."session_id"`,
    );
    await queryRunner.query('ALTER TABLE "session_participants" ALTER COLUMN "partner" SET NOT NULL');
    await queryRunner.query('CREATE INDEX IF NOT EXISTS "idx_participant_quarantine" ON "session_participants" ("number", "expires_at") ');
    await queryRunner.query('DROP INDEX "public"."idx_active_participant_number"');
    await queryRunner.query(
      `DROP FUNCTION "broker_reserve_session"(text, text[], text[], uuid[], uuid, text[], text, jsonb, double precision, text, integer,
                                              timestamptz, integer, text, text, boolean)`,
    );
    await queryRunner.query(RESERVE_FUNCTION);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION "broker_reserve_session"(text, text[], text[], uuid[], uuid, text[], text, jsonb, double precision, text, integer,
                                              timestamptz, integer, text, text, boolean, integer)`,
    );
    await queryRunner.query(CONVERSATION_RESERVE_FUNCTION);
    await queryRunner.query('CREATE INDEX "idx_active_participant_number" ON "session_participants" ("number") WHERE "active"');
    await queryRunner.query('DROP INDEX "public"."idx_participant_quarantine"');
    await queryRunner.query('ALTER TABLE "session_participants" DROP COLUMN "partner"');
  }
}

/**
 * ConversationSessions' function, with: `p_quarantine_seconds`; the numbers either participant shared, within
 * the quarantine before `p_now`, with someone other than the other participant (`held`, one range of
 * idx_participant_quarantine per participant) left out of the candidates; each participant row's `partner`
 * written; and `quarantined` in the answer when nothing was reserved. The rest is the function as it was.
 */
export const RESERVE_FUNCTION = `CREATE FUNCTION "broker_reserve_session"(
   p_provider text, p_channels text[], p_numbers text[], p_load_order uuid[], p_account_id uuid, p_participants text[],
   p_callback_url text, p_metadata jsonb, p_ttl_seconds double precision, p_idempotency_key text, p_participant_limit integer,
   p_now timestamptz, p_idle_ttl_seconds integer, p_unique_name text, p_intercept_url text, p_sticky boolean,
   p_quarantine_seconds integer)
 RETURNS TABLE (id uuid, proxy_number_id uuid, proxy_number text, created_at timestamptz, expires_at timestamptz, inactive_at timestamptz,
                over_limit_number text, over_limit_held integer, quarantined integer)
 LANGUAGE plpgsql VOLATILE
 SET plan_cache_mode = force_generic_plan
 SET enable_seqscan = off
 AS $fn$
 #variable_conflict use_column
 DECLARE
   reserved record;
   sticky_id uuid;
   hard_limit timestamptz := p_now + make_interval(secs => p_ttl_seconds);
   -- least() ignores a NULL: without an idle TTL the deadline is the hard limit.
   deadline timestamptz := least(hard_limit, p_now + make_interval(secs => p_idle_ttl_seconds));
   -- Rows live now or ended within the quarantine, with a partner who is not the other participant: their numbers are held.
   held uuid[] := ARRAY(SELECT DISTINCT q.proxy_number_id FROM session_participants q
                         WHERE q.number = ANY(p_numbers) AND q.expires_at > p_now - make_interval(secs => p_quarantine_seconds)
                           AND NOT (q.partner = ANY(p_numbers)));
 BEGIN
   IF p_sticky THEN
     SELECT h.proxy_number_id INTO sticky_id FROM session_participants h
      WHERE h.account_id = p_account_id AND h.number = p_participants[1]
      ORDER BY h.created_at DESC LIMIT 1;
   END IF;
   WITH candidate AS (
     SELECT o.id, o.number, o.shared FROM (
       SELECT pn.id, pn.number, pn.account_id IS NULL AS shared, lo.load_rank, pn.id IS NOT DISTINCT FROM sticky_id AS sticky
         FROM proxy_numbers pn
              LEFT JOIN unnest(p_load_order) WITH ORDINALITY AS lo(number_id, load_rank) ON lo.number_id = pn.id
        WHERE pn.provider = p_provider AND pn.enabled AND p_channels <@ pn.capabilities AND pn.id <> ALL(held)
          AND (pn.account_id = p_account_id OR (pn.account_id IS NULL AND NOT EXISTS (
                SELECT 1 FROM session_participants sp
                 WHERE sp.account_id = p_account_id AND sp.number = ANY(p_numbers) AND sp.active AND sp.shared_slot IS NOT NULL
                   AND sp.expires_at > p_now
                 GROUP BY sp.number HAVING count(*) >= p_participant_limit)))
        ORDER BY sticky DESC, shared, load_rank NULLS FIRST, pn.number
        OFFSET 0) o
      WHERE NOT EXISTS (SELECT 1 FROM session_participants sp
                         WHERE sp.proxy_number_id = o.id AND sp.active AND sp.expires_at > p_now AND sp.number = ANY(p_numbers))
      ORDER BY o.sticky DESC, o.shared, o.load_rank NULLS FIRST, o.number
      LIMIT 1
   ), ins AS (
     INSERT INTO sessions (account_id, channels, status, provider, proxy_number_id, proxy_number, participants, callback_url, metadata,
                           created_at, expires_at, inactive_at, idle_ttl_seconds, unique_name, intercept_url, idempotency_key)
     SELECT p_account_id, p_channels, 'pending', p_provider, c.id, c.number, p_participants, p_callback_url, p_metadata,
            p_now, hard_limit, deadline, p_idle_ttl_seconds, p_unique_name, p_intercept_url, p_idempotency_key FROM candidate c
     RETURNING sessions.id, sessions.proxy_number_id, sessions.proxy_number, sessions.created_at, sessions.expires_at, sessions.inactive_at
   ), participants AS (
     INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, account_id, shared_slot, created_at, partner)
     SELECT r.id, n, r.proxy_number_id, true, r.inactive_at, p_account_id,
            CASE WHEN c.shared THEN (
              SELECT min(g) FROM (SELECT 1 AS g UNION ALL
                                  SELECT t.shared_slot + 1 FROM session_participants t
                                   WHERE t.account_id = p_account_id AND t.number = n AND t.active AND t.shared_slot IS NOT NULL
                                     AND t.expires_at > p_now) g
               WHERE g <= p_participant_limit AND NOT EXISTS (SELECT 1 FROM session_participants x
                                  WHERE x.account_id = p_account_id AND x.number = n AND x.active AND x.expires_at > p_now
                                    AND x.shared_slot = g)) END,
            p_now, CASE WHEN n = p_numbers[1] THEN p_numbers[2] ELSE p_numbers[1] END
       FROM ins r, candidate c, unnest(p_numbers) AS n
   )
   SELECT i.id, i.proxy_number_id, i.proxy_number, i.created_at, i.expires_at, i.inactive_at INTO reserved FROM ins i;
   IF FOUND THEN
     id := reserved.id;
     proxy_number_id := reserved.proxy_number_id;
     proxy_number := reserved.proxy_number;
     created_at := reserved.created_at;
     expires_at := reserved.expires_at;
     inactive_at := reserved.inactive_at;
     RETURN NEXT;
     RETURN;
   END IF;
   -- Held only by the quarantine: numbers of this provider no live session of these participants is on.
   SELECT count(*)::int INTO quarantined FROM proxy_numbers pn
    WHERE pn.id = ANY(held) AND pn.provider = p_provider AND pn.enabled
      AND NOT EXISTS (SELECT 1 FROM session_participants sp
                       WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.expires_at > p_now AND sp.number = ANY(p_numbers));
   SELECT sp.number, count(*)::int INTO over_limit_number, over_limit_held FROM session_participants sp
    WHERE sp.account_id = p_account_id AND sp.number = ANY(p_numbers) AND sp.active AND sp.shared_slot IS NOT NULL
      AND sp.expires_at > p_now
    GROUP BY sp.number HAVING count(*) >= p_participant_limit
    ORDER BY sp.number LIMIT 1;
   IF FOUND OR quarantined > 0 THEN
     RETURN NEXT;
   END IF;
 END
 $fn$`;
