import type { MigrationInterface, QueryRunner } from 'typeorm';
import { RESERVE_FUNCTION as QUARANTINE_RESERVE_FUNCTION } from './1796190000000-NumberQuarantine';

const RESERVE_ARGS = `text, text[], text[], uuid[], uuid, text[], text, jsonb, double precision, text, integer, timestamptz, integer, text,
                      text, boolean, integer`;

/**
 * A create on a provider that keeps no sessions of its own (Twilio, Vonage, Africa's Talking, Infobip:
 * `keepsSessions = false`) is one statement and one commit (issue #34 item 1): `broker_create_session` reserves the
 * number and writes the session `active` straight away, with its participant rows, its `session.created` event
 * and the event's delivery, in one transaction. There is no provider call to protect, so the reservation needs no
 * commit of its own: before, such a create committed the reservation (a pending row a crash in the bind would leave
 * for the sweeper) and then the activation, two round trips and two commits.
 *
 * The guarantees are the reservation's (the pool rule, the participant limit's slots, the quarantine: the same
 * function does the picking) and the activation's (the event and its delivery commit with the session, or
 * nothing does; the delivery's URL is returned for the caller to wake the workers after the commit). The event's
 * data is the broker's (EventOutbox's ten parameters, in its order) but for the session's proxy number, which only
 * the reservation knows: it is written into `data.session.proxyNumber` and into the current (last) entry of
 * `data.session.numberHistory` (left as it is where the data has none). The session's id comes from the broker, so
 * the event's data names it before the statement runs.
 *
 * `broker_reserve_session` takes the session's id and the status to write (`pending` for a create that binds on
 * its provider first, `active` here). The previous signature is dropped: stop replicas of the previous version
 * before migrating.
 */
export class CreateInOneStatement1796191000000 implements MigrationInterface {
  name = 'CreateInOneStatement1796191000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION "broker_reserve_session"(${RESERVE_ARGS})`);
    await queryRunner.query(RESERVE_FUNCTION);
    await queryRunner.query(CREATE_FUNCTION);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION "broker_create_session"(${RESERVE_ARGS}, uuid, uuid, uuid, uuid, text, text, jsonb, timestamptz, uuid, timestamptz, text)`,
    );
    await queryRunner.query(`DROP FUNCTION "broker_reserve_session"(${RESERVE_ARGS}, uuid, text)`);
    await queryRunner.query(QUARANTINE_RESERVE_FUNCTION);
  }
}

/** NumberQuarantine's function, with the session's id (`p_session_id`) and status (`p_status`) written as given. */
export const RESERVE_FUNCTION = `CREATE FUNCTION "broker_reserve_session"(
   p_provider text, p_channels text[], p_numbers text[], p_load_order uuid[], p_account_id uuid, p_participants text[],
   p_callback_url text, p_metadata jsonb, p_ttl_seconds double precision, p_idempotency_key text, p_participant_limit integer,
   p_now timestamptz, p_idle_ttl_seconds integer, p_unique_name text, p_intercept_url text, p_sticky boolean,
   p_quarantine_seconds integer, p_session_id uuid, p_status text)
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
     INSERT INTO sessions (id, account_id, channels, status, provider, proxy_number_id, proxy_number, participants, callback_url, metadata,
                           created_at, expires_at, inactive_at, idle_ttl_seconds, unique_name, intercept_url, idempotency_key)
     SELECT p_session_id, p_account_id, p_channels, p_status, p_provider, c.id, c.number, p_participants, p_callback_url, p_metadata,
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

/**
 * The reservation with `active`, then, when it reserved, the event and its delivery as broker_activate_session_wake_after
 * writes them (its `p_*` event parameters, the data's proxy number set); the refusal's row as the reservation gives it.
 */
export const CREATE_FUNCTION = `CREATE FUNCTION "broker_create_session"(
   p_provider text, p_channels text[], p_numbers text[], p_load_order uuid[], p_account_id uuid, p_participants text[],
   p_callback_url text, p_metadata jsonb, p_ttl_seconds double precision, p_idempotency_key text, p_participant_limit integer,
   p_now timestamptz, p_idle_ttl_seconds integer, p_unique_name text, p_intercept_url text, p_sticky boolean,
   p_quarantine_seconds integer, p_session_id uuid,
   p_event_id uuid, p_event_account_id uuid, p_event_session_id uuid, p_type text, p_event_callback_url text, p_data jsonb,
   p_created_at timestamptz, p_delivery_id uuid, p_delivery_expires_at timestamptz, p_kind text)
 RETURNS TABLE (id uuid, proxy_number_id uuid, proxy_number text, created_at timestamptz, expires_at timestamptz, inactive_at timestamptz,
                over_limit_number text, over_limit_held integer, quarantined integer, delivery_url text)
 LANGUAGE plpgsql VOLATILE
 SET plan_cache_mode = force_generic_plan
 SET enable_seqscan = off
 AS $fn$
 DECLARE
   r record;
   target text;
 BEGIN
   SELECT * INTO r FROM broker_reserve_session(p_provider, p_channels, p_numbers, p_load_order, p_account_id, p_participants,
     p_callback_url, p_metadata, p_ttl_seconds, p_idempotency_key, p_participant_limit, p_now, p_idle_ttl_seconds, p_unique_name,
     p_intercept_url, p_sticky, p_quarantine_seconds, p_session_id, 'active');
   IF NOT FOUND THEN
     RETURN;
   END IF;
   id := r.id;
   proxy_number_id := r.proxy_number_id;
   proxy_number := r.proxy_number;
   created_at := r.created_at;
   expires_at := r.expires_at;
   inactive_at := r.inactive_at;
   over_limit_number := r.over_limit_number;
   over_limit_held := r.over_limit_held;
   quarantined := r.quarantined;
   IF r.id IS NOT NULL THEN
     target := COALESCE(p_event_callback_url, (SELECT a.default_callback_url FROM accounts a WHERE a.id = p_event_account_id));
     INSERT INTO webhook_events (id, account_id, session_id, type, data, created_at)
     VALUES (p_event_id, p_event_account_id, p_event_session_id, p_type, jsonb_set(jsonb_set(p_data, '{session,proxyNumber}', to_jsonb(r.proxy_number)),
                                                                                   '{session,numberHistory,-1,proxyNumber}', to_jsonb(r.proxy_number)),
             p_created_at);
     IF target IS NOT NULL THEN
       INSERT INTO webhook_deliveries (id, event_id, account_id, kind, url, status, attempts, next_attempt_at, expires_at, created_at, updated_at)
       VALUES (p_delivery_id, p_event_id, p_event_account_id, p_kind, target, 'pending', 0, p_created_at, p_delivery_expires_at, p_created_at,
               p_created_at);
     END IF;
     delivery_url := target;
   END IF;
   RETURN NEXT;
 END
 $fn$`;
