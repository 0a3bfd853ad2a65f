import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1796021822493 implements MigrationInterface {
  name = 'InitialSchema1796021822493';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "accounts" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "name" text NOT NULL, "default_callback_url" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_5a7a02c20412299d198e097a8fe" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "api_keys" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "account_id" uuid NOT NULL, "key_hash" character(64) NOT NULL, "key_prefix" text NOT NULL, "label" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "idx_api_keys_account" ON "api_keys"  ("account_id") ');
    await queryRunner.query('CREATE UNIQUE INDEX "uq_api_keys_hash" ON "api_keys"  ("key_hash") ');
    await queryRunner.query(
      'CREATE TABLE "idempotency_records" ("account_id" uuid NOT NULL, "key" text NOT NULL, "request_hash" character(64) NOT NULL, "response_status" integer, "response_body" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_182d8baf276f181c167e46e248e" PRIMARY KEY ("account_id", "key"))',
    );
    await queryRunner.query('CREATE INDEX "idx_idempotency_expires" ON "idempotency_records"  ("expires_at") ');
    await queryRunner.query(
      'CREATE TABLE "proxy_numbers" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "provider" text NOT NULL, "number" text NOT NULL, "capabilities" text array NOT NULL DEFAULT \'{sms,voice}\', "enabled" boolean NOT NULL DEFAULT true, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "uq_proxy_numbers_provider_number" UNIQUE ("provider", "number"), CONSTRAINT "chk_proxy_numbers_e164" CHECK ("number" ~ \'^\\+[1-9][0-9]{6,14}$\'), CONSTRAINT "PK_12493a04a2a7e3f8e3eb96b878c" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "breaker_transitions" ("id" BIGSERIAL NOT NULL, "provider" text NOT NULL, "from_state" text NOT NULL, "to_state" text NOT NULL, "reason" text NOT NULL, "last_error" text, "at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_7a3d1d1345e9bda5879017d7442" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "idx_breaker_transitions_provider_at" ON "breaker_transitions"  ("provider", "at") ');
    await queryRunner.query(
      'CREATE TABLE "provider_states" ("provider" text NOT NULL, "snapshot" jsonb, "disabled" boolean NOT NULL DEFAULT false, "disabled_reason" text, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_f6f0eaef0fa07685b77c991f37f" PRIMARY KEY ("provider"))',
    );
    await queryRunner.query(
      'CREATE TABLE "sessions" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "account_id" uuid NOT NULL, "channel" text NOT NULL, "status" text NOT NULL, "provider" text NOT NULL, "proxy_number_id" uuid NOT NULL, "proxy_number" text NOT NULL, "participants" text array NOT NULL, "binding_id" text, "callback_url" text, "metadata" jsonb NOT NULL DEFAULT \'{}\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "ended_at" TIMESTAMP WITH TIME ZONE, "released_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "chk_sessions_status" CHECK ("status" IN (\'pending\', \'active\', \'closed\', \'expired\')), CONSTRAINT "chk_sessions_channel" CHECK ("channel" IN (\'voice\', \'sms\')), CONSTRAINT "PK_3238ef96f18b355b671619111bc" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "idx_sessions_status_expires" ON "sessions"  ("status", "expires_at") ');
    await queryRunner.query('CREATE INDEX "idx_sessions_account_created" ON "sessions"  ("account_id", "created_at", "id") ');
    await queryRunner.query(
      'CREATE TABLE "interactions" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "session_id" uuid NOT NULL, "channel" text NOT NULL, "from_number" text NOT NULL, "to_number" text NOT NULL, "text" text, "status" text NOT NULL, "provider_ref" text, "attempts" integer NOT NULL DEFAULT \'0\', "next_attempt_at" TIMESTAMP WITH TIME ZONE, "last_error" text, "duration_sec" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "chk_interactions_channel" CHECK ("channel" IN (\'voice\', \'sms\')), CONSTRAINT "PK_911b7416a6671b4148b18c18ecb" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "idx_interactions_due" ON "interactions"  ("next_attempt_at") WHERE "status" = \'pending\'');
    await queryRunner.query('CREATE INDEX "idx_interactions_session" ON "interactions"  ("session_id", "created_at") ');
    await queryRunner.query(
      'CREATE TABLE "session_participants" ("session_id" uuid NOT NULL, "number" text NOT NULL, "proxy_number_id" uuid NOT NULL, "active" boolean NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_0e2f17841f82f5c3e90ff2e12db" PRIMARY KEY ("session_id", "number"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_active_participant_per_proxy" ON "session_participants"  ("proxy_number_id", "number") WHERE "active"',
    );
    await queryRunner.query(
      'ALTER TABLE "api_keys" ADD CONSTRAINT "FK_decaf331589778e33441b2a8d9e" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "sessions" ADD CONSTRAINT "FK_da0cf19646ff5c6e3c0284468e5" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "sessions" ADD CONSTRAINT "FK_94bb59dd15d45acebb600f068b9" FOREIGN KEY ("proxy_number_id") REFERENCES "proxy_numbers"("id") ON DELETE RESTRICT ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "interactions" ADD CONSTRAINT "FK_fb7e01bd56d3328af481e280439" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "session_participants" ADD CONSTRAINT "FK_0f44aaaaf807cef66c6fa9494a8" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "session_participants" DROP CONSTRAINT "FK_0f44aaaaf807cef66c6fa9494a8"');
    await queryRunner.query('ALTER TABLE "interactions" DROP CONSTRAINT "FK_fb7e01bd56d3328af481e280439"');
    await queryRunner.query('ALTER TABLE "sessions" DROP CONSTRAINT "FK_94bb59dd15d45acebb600f068b9"');
    await queryRunner.query('ALTER TABLE "sessions" DROP CONSTRAINT "FK_da0cf19646ff5c6e3c0284468e5"');
    await queryRunner.query('ALTER TABLE "api_keys" DROP CONSTRAINT "FK_decaf331589778e33441b2a8d9e"');
    await queryRunner.query('DROP INDEX "public"."uq_active_participant_per_proxy"');
    await queryRunner.query('DROP TABLE "session_participants"');
    await queryRunner.query('DROP INDEX "public"."idx_interactions_session"');
    await queryRunner.query('DROP INDEX "public"."idx_interactions_due"');
    await queryRunner.query('DROP TABLE "interactions"');
    await queryRunner.query('DROP INDEX "public"."idx_sessions_account_created"');
    await queryRunner.query('DROP INDEX "public"."idx_sessions_status_expires"');
    await queryRunner.query('DROP TABLE "sessions"');
    await queryRunner.query('DROP TABLE "provider_states"');
    await queryRunner.query('DROP INDEX "public"."idx_breaker_transitions_provider_at"');
    await queryRunner.query('DROP TABLE "breaker_transitions"');
    await queryRunner.query('DROP TABLE "proxy_numbers"');
    await queryRunner.query('DROP INDEX "public"."idx_idempotency_expires"');
    await queryRunner.query('DROP TABLE "idempotency_records"');
    await queryRunner.query('DROP INDEX "public"."uq_api_keys_hash"');
    await queryRunner.query('DROP INDEX "public"."idx_api_keys_account"');
    await queryRunner.query('DROP TABLE "api_keys"');
    await queryRunner.query('DROP TABLE "accounts"');
  }
}
