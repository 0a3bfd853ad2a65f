import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ReserveSessionFunction1796096000000 } from './1796096000000-ReserveSessionFunction';

/**
 * broker_reserve_session (ReserveSessionFunction) stops at the first free number, and ranks numbers by
 * load without a search per number. Before, it ranked every enabled number of the provider with
 * `array_position` over the load order (a linear search of up to one id per number carrying sessions),
 * and how it checked them for an active participant was the generic plan's choice, made once per
 * connection from the statistics of the moment: one read of the participants' rows (what the bench's
 * broker connections got), or one index probe per number, all of them before the sort (what a
 * connection planning over 2 000 sessions got: 216 buffer hits for the candidate at 100 numbers,
 * auto_explain, against 7 now). Driven directly at 8 connections on such a database, the create's two
 * statements read 244-307 buffers per create before and 102-112 after.
 *
 * Now the numbers are put in order first, in a subquery the planner keeps whole (`OFFSET 0`): dedicated
 * ones, then by load order (a hash join on the load order's ids and their positions; numbers not in it
 * first), then by number, the same order as before. Only then is each checked for an active participant,
 * and the outer `ORDER BY` on the same keys keeps that order whatever join the planner picks: the first
 * number neither participant is active on is the one taken, as before, and the search stops there.
 * Everything else is the function as it was: the participant limit, the slots, the refusal's row, the
 * settings (a generic plan of index lookups only).
 */
export class ReserveFirstFreeNumber1796100000000 implements MigrationInterface {
  name = 'ReserveFirstFreeNumber1796100000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE OR REPLACE FUNCTION "broker_reserve_session"(
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
           SELECT o.id, o.number, o.shared FROM (
             SELECT pn.id, pn.number, pn.account_id IS NULL AS shared, lo.load_rank FROM proxy_numbers pn
                    LEFT JOIN unnest(p_load_order) WITH ORDINALITY AS lo(number_id, load_rank) ON lo.number_id = pn.id
              WHERE pn.provider = p_provider AND pn.enabled AND p_channel = ANY(pn.capabilities)
                AND (pn.account_id = p_account_id OR (pn.account_id IS NULL AND NOT EXISTS (
                      SELECT 1 FROM session_participants sp
                       WHERE sp.account_id = p_account_id AND sp.number = ANY(p_numbers) AND sp.active AND sp.shared_slot IS NOT NULL
                         AND sp.expires_at > now()
                       GROUP BY sp.number HAVING count(*) >= p_participant_limit)))
              ORDER BY shared, load_rank NULLS FIRST, pn.number
              OFFSET 0) o
            WHERE NOT EXISTS (SELECT 1 FROM session_participants sp
                               WHERE sp.proxy_number_id = o.id AND sp.active AND sp.expires_at > now() AND sp.number = ANY(p_numbers))
            ORDER BY o.shared, o.load_rank NULLS FIRST, o.number
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
    await new ReserveSessionFunction1796096000000().up(queryRunner);
  }
}
