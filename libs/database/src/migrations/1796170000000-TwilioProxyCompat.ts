import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Twilio-Proxy-compatible API (issue #35, apps/broker/src/compat/twilio-proxy): its Services, the pool
 * numbers in each, its Sessions and their Participants, in tables of their own; interactions stay the
 * broker's. `sessions.pending_until` lets a reservation stay pending past a create's time while a Proxy
 * Session holds its first participant's proxy number for the second (the sweeper drops it once the hold
 * ends); every existing session has none, and keeps its behaviour.
 */
export class TwilioProxyCompat1796170000000 implements MigrationInterface {
  name = 'TwilioProxyCompat1796170000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "twilio_proxy_services" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "account_id" uuid NOT NULL, "unique_name" text NOT NULL, "default_ttl" integer NOT NULL DEFAULT \'0\', "callback_url" text, "intercept_callback_url" text, "out_of_session_callback_url" text, "number_selection_behavior" text NOT NULL DEFAULT \'prefer-sticky\', "geo_match_level" text NOT NULL DEFAULT \'country\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "uq_twilio_proxy_services_name" UNIQUE ("account_id", "unique_name"), CONSTRAINT "chk_twilio_proxy_services_geo" CHECK ("geo_match_level" = \'country\'), CONSTRAINT "chk_twilio_proxy_services_selection" CHECK ("number_selection_behavior" IN (\'prefer-sticky\', \'avoid-sticky\')), CONSTRAINT "chk_twilio_proxy_services_ttl" CHECK ("default_ttl" >= 0), CONSTRAINT "PK_6d960ae454259b1777b399bbc79" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "idx_twilio_proxy_services_account" ON "twilio_proxy_services"  ("account_id", "created_at", "id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "twilio_proxy_phone_numbers" ("proxy_number_id" uuid NOT NULL, "service_id" uuid NOT NULL, "is_reserved" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_e6a650d546da91bd8f40b83fcf1" PRIMARY KEY ("proxy_number_id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "idx_twilio_proxy_phone_numbers_service" ON "twilio_proxy_phone_numbers"  ("service_id", "created_at", "proxy_number_id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "twilio_proxy_sessions" ("id" uuid NOT NULL, "service_id" uuid NOT NULL, "account_id" uuid NOT NULL, "unique_name" text, "mode" text NOT NULL, "ttl" integer NOT NULL DEFAULT \'0\', "date_expiry" TIMESTAMP WITH TIME ZONE, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "closed_at" TIMESTAMP WITH TIME ZONE, "closed_reason" text, "deleted_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "chk_twilio_proxy_sessions_ttl" CHECK ("ttl" >= 0), CONSTRAINT "chk_twilio_proxy_sessions_mode" CHECK ("mode" IN (\'voice-and-message\', \'message-only\', \'voice-only\')), CONSTRAINT "PK_dd806a32ecf482e2a486066fa32" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_twilio_proxy_sessions_name" ON "twilio_proxy_sessions"  ("service_id", "unique_name") WHERE "unique_name" IS NOT NULL AND "deleted_at" IS NULL',
    );
    await queryRunner.query(
      'CREATE INDEX "idx_twilio_proxy_sessions_service" ON "twilio_proxy_sessions"  ("service_id", "created_at", "id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "twilio_proxy_participants" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "session_id" uuid NOT NULL, "identifier" text NOT NULL, "friendly_name" text, "requested_proxy_number_id" uuid, "slot" smallint NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "deleted_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "chk_twilio_proxy_participants_slot" CHECK ("slot" IN (1, 2)), CONSTRAINT "PK_0742136549b8fd02ebc2be879e6" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_twilio_proxy_participants_identifier" ON "twilio_proxy_participants"  ("session_id", "identifier") WHERE "deleted_at" IS NULL',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_twilio_proxy_participants_slot" ON "twilio_proxy_participants"  ("session_id", "slot") WHERE "deleted_at" IS NULL',
    );
    await queryRunner.query('ALTER TABLE "sessions" ADD "pending_until" TIMESTAMP WITH TIME ZONE');
    await queryRunner.query(
      'ALTER TABLE "twilio_proxy_services" ADD CONSTRAINT "FK_3c35ddc2b3d101269efdfe1fdb7" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "twilio_proxy_phone_numbers" ADD CONSTRAINT "FK_e6a650d546da91bd8f40b83fcf1" FOREIGN KEY ("proxy_number_id") REFERENCES "proxy_numbers"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "twilio_proxy_phone_numbers" ADD CONSTRAINT "FK_5db49d0fdf2b45fb55c3934df87" FOREIGN KEY ("service_id") REFERENCES "twilio_proxy_services"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "twilio_proxy_sessions" ADD CONSTRAINT "FK_78dd2b8ddd12eac5f45ce09f63e" FOREIGN KEY ("service_id") REFERENCES "twilio_proxy_services"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "twilio_proxy_participants" ADD CONSTRAINT "FK_6c6b80c614963a20f58bb60ba79" FOREIGN KEY ("session_id") REFERENCES "twilio_proxy_sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "twilio_proxy_participants" DROP CONSTRAINT "FK_6c6b80c614963a20f58bb60ba79"');
    await queryRunner.query('ALTER TABLE "twilio_proxy_sessions" DROP CONSTRAINT "FK_78dd2b8ddd12eac5f45ce09f63e"');
    await queryRunner.query('ALTER TABLE "twilio_proxy_phone_numbers" DROP CONSTRAINT "FK_5db49d0fdf2b45fb55c3934df87"');
    await queryRunner.query('ALTER TABLE "twilio_proxy_phone_numbers" DROP CONSTRAINT "FK_e6a650d546da91bd8f40b83fcf1"');
    await queryRunner.query('ALTER TABLE "twilio_proxy_services" DROP CONSTRAINT "FK_3c35ddc2b3d101269efdfe1fdb7"');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "pending_until"');
    await queryRunner.query('DROP INDEX "public"."uq_twilio_proxy_participants_slot"');
    await queryRunner.query('DROP INDEX "public"."uq_twilio_proxy_participants_identifier"');
    await queryRunner.query('DROP TABLE "twilio_proxy_participants"');
    await queryRunner.query('DROP INDEX "public"."idx_twilio_proxy_sessions_service"');
    await queryRunner.query('DROP INDEX "public"."uq_twilio_proxy_sessions_name"');
    await queryRunner.query('DROP TABLE "twilio_proxy_sessions"');
    await queryRunner.query('DROP INDEX "public"."idx_twilio_proxy_phone_numbers_service"');
    await queryRunner.query('DROP TABLE "twilio_proxy_phone_numbers"');
    await queryRunner.query('DROP INDEX "public"."idx_twilio_proxy_services_account"');
    await queryRunner.query('DROP TABLE "twilio_proxy_services"');
  }
}
