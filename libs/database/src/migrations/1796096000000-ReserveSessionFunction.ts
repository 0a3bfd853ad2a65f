import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The reservation (apps/broker/src/sessions/session-reservation.repository.ts) as a function, so that
 * PostgreSQL parses and plans it once per connection instead of once per create: PL/pgSQL keeps each
 * statement's plan for the connection's life. Its SET clauses hold only while it runs:
 *
 * - `plan_cache_mode = force_generic_plan`: one plan for any parameters (left to itself, PostgreSQL
 *   compares the generic plan's estimate with the custom plans' and, estimating `unnest` of an array
 *   parameter at 10 rows, keeps planning every call);
 * - `enable_seqscan = off`: that plan, and the foreign-key checks first planned inside it, never read
 *   sessions or session_participants sequentially because statistics taken while they were nearly
 *   empty said so; such a plan is kept while the tables grow (15-20 ms a reservation at 6 000 sessions,
 *   measured) until the next ANALYZE. Every lookup here has an index.
 *
 * The statements are those of the reservation before (one data-modifying WITH: the candidate number,
 * the pending session, its two participant rows with their shared-pool slots); when nothing was
 * reserved, the same call says which participant, if any, the account holds `p_participant_limit`
 * shared-pool sessions with (the participant limit's refusal), so that condition is written once.
 */
export class ReserveSessionFunction1796096000000 implements MigrationInterface {
  name = 'ReserveSessionFunction1796096000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION "broker_reserve_session"(
         p_provider text, p_channel text, p_numbers text[], p_load_order uuid[], p_account_id uuid, p_participants text[],
         p_callback_url text, p_metadata jsonb, p_ttl_seconds double precision, p_idempotency_key text, p_participant_limit integer)
       RETURNS TABLE (id uuid, proxy_number_id uuid, proxy_number text, created_at timestamptz, expires_at timestamptz,
                      over_limit_number text, over_limit_held integer)
       LANGUAGE plpgsql VOLATILE
       SET plan_cache_mode = force_generic_plan
       SET enable_seqscan = off
       AS $fn$
       #variable_conflict use_column
       DECLARE
         reserved record;
       BEGIN
         WITH candidate AS (
           SELECT pn.id, pn.number, pn.account_id IS NULL AS shared FROM proxy_numbers pn
            WHERE pn.provider = p_provider AND pn.enabled AND p_channel = ANY(pn.capabilities)
              AND NOT EXISTS (SELECT 1 FROM session_participants sp
                               WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.expires_at > now() AND sp.number = ANY(p_numbers))
              AND (pn.account_id = p_account_id OR (pn.account_id IS NULL AND NOT EXISTS (
                    SELECT 1 FROM session_participants sp
                     WHERE sp.account_id = p_account_id AND sp.number = ANY(p_numbers) AND sp.active AND sp.shared_slot IS NOT NULL
                       AND sp.expires_at > now()
                     GROUP BY sp.number HAVING count(*) >= p_participant_limit)))
            ORDER BY pn.account_id IS NULL, array_position(p_load_order, pn.id) NULLS FIRST, pn.number
            LIMIT 1
         ), ins AS (
           INSERT INTO sessions (account_id, channel, status, provider, proxy_number_id, proxy_number, participants, callback_url, metadata,
                                 expires_at, idempotency_key)
           SELECT p_account_id, p_channel, 'pending', p_provider, c.id, c.number, p_participants, p_callback_url, p_metadata,
                  now() + make_interval(secs => p_ttl_seconds), p_idempotency_key FROM candidate c
           RETURNING sessions.id, sessions.proxy_number_id, sessions.proxy_number, sessions.created_at, sessions.expires_at
         ), participants AS (
           INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, account_id, shared_slot)
           SELECT r.id, n, r.proxy_number_id, true, r.expires_at, p_account_id,
                  CASE WHEN c.shared THEN (
                    SELECT min(g) FROM (SELECT 1 AS g UNION ALL
                                        SELECT t.shared_slot + 1 FROM session_participants t
                                         WHERE t.account_id = p_account_id AND t.number = n AND t.active AND t.shared_slot IS NOT NULL
                                           AND t.expires_at > now()) g
                     WHERE g <= p_participant_limit AND NOT EXISTS (SELECT 1 FROM session_participants x
                                        WHERE x.account_id = p_account_id AND x.number = n AND x.active AND x.expires_at > now()
                                          AND x.shared_slot = g)) END
             FROM ins r, candidate c, unnest(p_numbers) AS n
         )
         SELECT i.id, i.proxy_number_id, i.proxy_number, i.created_at, i.expires_at INTO reserved FROM ins i;
         IF FOUND THEN
           id := reserved.id;
           proxy_number_id := reserved.proxy_number_id;
           proxy_number := reserved.proxy_number;
           created_at := reserved.created_at;
           expires_at := reserved.expires_at;
           RETURN NEXT;
           RETURN;
         END IF;
         SELECT sp.number, count(*)::int INTO over_limit_number, over_limit_held FROM session_participants sp
          WHERE sp.account_id = p_account_id AND sp.number = ANY(p_numbers) AND sp.active AND sp.shared_slot IS NOT NULL
            AND sp.expires_at > now()
          GROUP BY sp.number HAVING count(*) >= p_participant_limit
          ORDER BY sp.number LIMIT 1;
         IF FOUND THEN
           RETURN NEXT;
         END IF;
       END
       $fn$`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'DROP FUNCTION "broker_reserve_session"(text, text, text[], uuid[], uuid, text[], text, jsonb, double precision, text, integer)',
    );
  }
}
