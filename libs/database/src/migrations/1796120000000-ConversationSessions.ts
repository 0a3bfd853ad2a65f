import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ReserveFirstFreeNumber1796100000000 } from './1796100000000-ReserveFirstFreeNumber';

/**
 * Conversation sessions (issue #28): a session carries `channels` (voice, sms or both) instead of one
 * `channel`; it may expire after `idle_ttl_seconds` without an interaction (`inactive_at`: the moment it is
 * inactive from, expires_at or sooner; its participant rows carry a copy in their `expires_at`); it may have
 * a `unique_name` (one live session per name and account) and an `intercept_url`, as may an account.
 * Participant rows get their `created_at` (numberSelection "prefer-sticky" finds a participant's most recent
 * number by it), and a message sent from the app keeps its `idempotency_key` on its interaction.
 *
 * Existing data keeps its behaviour: a session's one channel becomes its only one, its `inactive_at` is its
 * `expires_at` (no idle expiry), sessions already expired expired on their ttl, and participant rows take
 * their session's creation time. Proxy numbers keep their capabilities.
 *
 * `broker_reserve_session` takes the channels (a number is eligible when it carries every one of them), the
 * time from the caller's clock (the one the broker's time rules read; no `now()` of its own), the idle TTL,
 * the unique name, the intercept URL and whether to prefer the first participant's most recent number. It is
 * still one statement, whatever the number of channels. The previous signature is dropped with `channel`:
 * replicas of the previous version cannot create sessions on this schema (stop them before migrating).
 */
export class ConversationSessions1796120000000 implements MigrationInterface {
  name = 'ConversationSessions1796120000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "accounts" ADD "intercept_url" text');

    await queryRunner.query('ALTER TABLE "sessions" ADD "channels" text array');
    await queryRunner.query('UPDATE "sessions" SET "channels" = ARRAY["channel"]');
    await queryRunner.query('ALTER TABLE "sessions" ALTER COLUMN "channels" SET NOT NULL');
    await queryRunner.query('ALTER TABLE "sessions" DROP CONSTRAINT "chk_sessions_channel"');
    await queryRunner.query(
      'DROP FUNCTION "broker_reserve_session"(text, text, text[], uuid[], uuid, text[], text, jsonb, double precision, text, integer)',
    );
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "channel"');

    await queryRunner.query('ALTER TABLE "sessions" ADD "idle_ttl_seconds" integer');
    await queryRunner.query('ALTER TABLE "sessions" ADD "last_interaction_at" TIMESTAMP WITH TIME ZONE');
    await queryRunner.query('ALTER TABLE "sessions" ADD "inactive_at" TIMESTAMP WITH TIME ZONE');
    await queryRunner.query('UPDATE "sessions" SET "inactive_at" = "expires_at"');
    await queryRunner.query('ALTER TABLE "sessions" ALTER COLUMN "inactive_at" SET NOT NULL');
    await queryRunner.query('ALTER TABLE "sessions" ADD "expired_reason" text');
    await queryRunner.query(`UPDATE "sessions" SET "expired_reason" = 'ttl' WHERE "status" = 'expired'`);
    await queryRunner.query('ALTER TABLE "sessions" ADD "unique_name" text');
    await queryRunner.query('ALTER TABLE "sessions" ADD "intercept_url" text');
    await queryRunner.query('DROP INDEX "public"."idx_sessions_status_expires"');
    await queryRunner.query('CREATE INDEX "idx_sessions_status_inactive" ON "sessions"  ("status", "inactive_at") ');
    await queryRunner.query(
      'CREATE INDEX "idx_sessions_unique_name" ON "sessions"  ("account_id", "unique_name", "created_at") WHERE "unique_name" IS NOT NULL',
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_sessions_live_unique_name" ON "sessions"  ("account_id", "unique_name") WHERE "unique_name" IS NOT NULL AND "status" IN ('pending', 'active')`,
    );
    await queryRunner.query(
      'ALTER TABLE "sessions" ADD CONSTRAINT "chk_sessions_idle_ttl" CHECK ("idle_ttl_seconds" IS NULL OR "idle_ttl_seconds" > 0)',
    );
    await queryRunner.query(
      `ALTER TABLE "sessions" ADD CONSTRAINT "chk_sessions_expired_reason" CHECK ("expired_reason" IS NULL OR "expired_reason" IN ('ttl', 'idle'))`,
    );
    await queryRunner.query(
      `ALTER TABLE "sessions" ADD CONSTRAINT "chk_sessions_channels" CHECK ("channels" IN ('{voice}', '{sms}', '{voice,sms}'))`,
    );

    await queryRunner.query('ALTER TABLE "session_participants" ADD "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()');
    await queryRunner.query(
      'UPDATE "session_participants" sp SET "created_at" = s."created_at" FROM "sessions" s WHERE s."id" = sp."session_id"',
    );
    await queryRunner.query('CREATE INDEX "idx_participant_history" ON "session_participants"  ("account_id", "number", "created_at") ');

    await queryRunner.query('ALTER TABLE "interactions" ADD "idempotency_key" text');
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_interactions_idempotency_key" ON "interactions"  ("session_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL',
    );

    await queryRunner.query(RESERVE_FUNCTION);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DROP FUNCTION "broker_reserve_session"(text, text[], text[], uuid[], uuid, text[], text, jsonb, double precision, text, integer,
                                              timestamptz, integer, text, text, boolean)`,
    );
    await queryRunner.query('DROP INDEX "public"."uq_interactions_idempotency_key"');
    await queryRunner.query('ALTER TABLE "interactions" DROP COLUMN "idempotency_key"');
    await queryRunner.query('DROP INDEX "public"."idx_participant_history"');
    await queryRunner.query('ALTER TABLE "session_participants" DROP COLUMN "created_at"');
    await queryRunner.query('ALTER TABLE "sessions" DROP CONSTRAINT "chk_sessions_channels"');
    await queryRunner.query('ALTER TABLE "sessions" DROP CONSTRAINT "chk_sessions_expired_reason"');
    await queryRunner.query('ALTER TABLE "sessions" DROP CONSTRAINT "chk_sessions_idle_ttl"');
    await queryRunner.query('DROP INDEX "public"."uq_sessions_live_unique_name"');
    await queryRunner.query('DROP INDEX "public"."idx_sessions_unique_name"');
    await queryRunner.query('DROP INDEX "public"."idx_sessions_status_inactive"');
    await queryRunner.query('CREATE INDEX "idx_sessions_status_expires" ON "sessions"  ("status", "expires_at") ');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "intercept_url"');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "unique_name"');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "expired_reason"');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "inactive_at"');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "last_interaction_at"');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "idle_ttl_seconds"');
    // A two-channel session goes back as a voice session: the older schema has one channel per session.
    await queryRunner.query('ALTER TABLE "sessions" ADD "channel" text');
    await queryRunner.query('UPDATE "sessions" SET "channel" = "channels"[1]');
    await queryRunner.query('ALTER TABLE "sessions" ALTER COLUMN "channel" SET NOT NULL');
    await queryRunner.query(`ALTER TABLE "sessions" ADD CONSTRAINT "chk_sessions_channel" CHECK ("channel" IN ('voice', 'sms'))`);
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "channels"');
    await queryRunner.query('ALTER TABLE "accounts" DROP COLUMN "intercept_url"');
    await new ReserveFirstFreeNumber1796100000000().up(queryRunner);
  }
}

/**
 * ReserveFirstFreeNumber's function, with: `p_channels <@ pn.capabilities` for `p_channel = ANY(...)`; every
 * time from `p_now` (the broker's clock) instead of `now()`; the session's deadline (`inactive_at`, the
 * earlier of its ttl and its idle TTL) copied into its participant rows' `expires_at`; the new columns written;
 * and, with `p_sticky`, the number of the first participant's most recent participant row with this account
 * (one probe of idx_participant_history) ranked before every other, where it is eligible (the pool rule and
 * the limit as for any number). The rest, and the order among the other numbers, is the function as it was.
 */
export const RESERVE_FUNCTION = `CREATE FUNCTION "broker_reserve_session"(
   p_provider text, p_channels text[], p_numbers text[], p_load_order uuid[], p_account_id uuid, p_participants text[],
   p_callback_url text, p_metadata jsonb, p_ttl_seconds double precision, p_idempotency_key text, p_participant_limit integer,
   p_now timestamptz, p_idle_ttl_seconds integer, p_unique_name text, p_intercept_url text, p_sticky boolean)
 RETURNS TABLE (id uuid, proxy_number_id uuid, proxy_number text, created_at timestamptz, expires_at timestamptz, inactive_at timestamptz,
                over_limit_number text, over_limit_held integer)
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
        WHERE pn.provider = p_provider AND pn.enabled AND p_channels <@ pn.capabilities
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
     INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at, account_id, shared_slot, created_at)
     SELECT r.id, n, r.proxy_number_id, true, r.inactive_at, p_account_id,
            CASE WHEN c.shared THEN (
              SELECT min(g) FROM (SELECT 1 AS g UNION ALL
                                  SELECT t.shared_slot + 1 FROM session_participants t
                                   WHERE t.account_id = p_account_id AND t.number = n AND t.active AND t.shared_slot IS NOT NULL
                                     AND t.expires_at > p_now) g
               WHERE g <= p_participant_limit AND NOT EXISTS (SELECT 1 FROM session_participants x
                                  WHERE x.account_id = p_account_id AND x.number = n AND x.active AND x.expires_at > p_now
                                    AND x.shared_slot = g)) END,
            p_now
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
   SELECT sp.number, count(*)::int INTO over_limit_number, over_limit_held FROM session_participants sp
    WHERE sp.account_id = p_account_id AND sp.number = ANY(p_numbers) AND sp.active AND sp.shared_slot IS NOT NULL
      AND sp.expires_at > p_now
    GROUP BY sp.number HAVING count(*) >= p_participant_limit
    ORDER BY sp.number LIMIT 1;
   IF FOUND THEN
     RETURN NEXT;
   END IF;
 END
 $fn$`;
