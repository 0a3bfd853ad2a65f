import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Session rescue (issue #36, docs/design.md#session-rescue). An account opts in with `rescue_after_seconds`
 * (and an optional `rescue_notice`); `session_moves` holds one row per session and outage, the breaker leader's
 * durable work (pending, then moved, failed or cancelled, settled in the move's own transaction); a session keeps
 * the numbers it had before in `number_history`. A trigger tells every replica (channel `broker_rescue_settings`) when an
 * account's setting changes.
 *
 * Nothing existing changes behaviour: no account has rescue on, every session's history is empty. The sessions
 * column has a constant default, so adding it rewrites no row; the new table's indexes are built `IF NOT EXISTS`
 * with the table itself (an empty table: nothing to build beforehand).
 */
export class SessionRescue1796180000000 implements MigrationInterface {
  name = 'SessionRescue1796180000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "accounts" ADD "rescue_after_seconds" integer');
    await queryRunner.query('ALTER TABLE "accounts" ADD "rescue_notice" text');
    await queryRunner.query(
      `ALTER TABLE "accounts" ADD CONSTRAINT "chk_accounts_rescue" CHECK ("rescue_after_seconds" >= 0 AND ("rescue_notice" IS NULL OR "rescue_after_seconds" IS NOT NULL))`,
    );
    // The breaker leader keeps the opted-in accounts in memory: it reads them again when one changes, on any replica.
    await queryRunner.query(
      `CREATE FUNCTION "broker_notify_rescue_setting"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN PERFORM pg_notify('broker_rescue_settings', NEW.id::text); RETURN NULL; END $$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "trg_accounts_rescue" AFTER UPDATE OF "rescue_after_seconds", "rescue_notice" ON "accounts"
       FOR EACH ROW EXECUTE FUNCTION "broker_notify_rescue_setting"()`,
    );
    await queryRunner.query(`ALTER TABLE "sessions" ADD "number_history" jsonb NOT NULL DEFAULT '[]'`);
    await queryRunner.query(
      `CREATE TABLE "session_moves" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "session_id" uuid NOT NULL, "account_id" uuid NOT NULL,
         "from_provider" text NOT NULL, "from_proxy_number_id" uuid NOT NULL, "from_proxy_number" text NOT NULL, "from_binding_id" text,
         "outage_started_at" TIMESTAMP WITH TIME ZONE NOT NULL, "status" text NOT NULL, "to_provider" text, "to_proxy_number_id" uuid,
         "to_proxy_number" text, "reason" text, "attempts" integer NOT NULL DEFAULT '0', "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL,
         "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "settled_at" TIMESTAMP WITH TIME ZONE, "moved_by" text,
         "from_released_at" TIMESTAMP WITH TIME ZONE,
         CONSTRAINT "chk_session_moves_status" CHECK ("status" IN ('pending', 'moved', 'failed', 'cancelled')),
         CONSTRAINT "PK_944e9b7f79b3c4aff17e3eab2e9" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX IF NOT EXISTS "uq_session_moves_once_per_outage" ON "session_moves" ("session_id", "from_provider", "outage_started_at") WHERE "status" <> 'cancelled'`,
    );
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "idx_session_moves_due" ON "session_moves" ("next_attempt_at") WHERE "status" = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "idx_session_moves_from_number" ON "session_moves" ("from_provider", "from_proxy_number") WHERE "status" = 'moved'`,
    );
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "idx_session_moves_unreleased" ON "session_moves" ("from_provider") WHERE "status" = 'moved' AND "from_binding_id" IS NOT NULL AND "from_released_at" IS NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "session_moves" ADD CONSTRAINT "FK_0638f98791fa8b6c6b709cbc3b2" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "session_moves"');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "number_history"');
    await queryRunner.query('DROP TRIGGER "trg_accounts_rescue" ON "accounts"');
    await queryRunner.query('DROP FUNCTION "broker_notify_rescue_setting"()');
    await queryRunner.query('ALTER TABLE "accounts" DROP CONSTRAINT "chk_accounts_rescue"');
    await queryRunner.query('ALTER TABLE "accounts" DROP COLUMN "rescue_notice"');
    await queryRunner.query('ALTER TABLE "accounts" DROP COLUMN "rescue_after_seconds"');
  }
}
