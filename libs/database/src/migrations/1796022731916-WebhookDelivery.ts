import type { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhookDelivery1796022731916 implements MigrationInterface {
  name = 'WebhookDelivery1796022731916';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "webhook_events" ("id" uuid NOT NULL, "account_id" uuid, "session_id" uuid, "type" text NOT NULL, "data" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_4cba37e6a0acb5e1fc49c34ebfd" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "idx_webhook_events_session_created" ON "webhook_events"  ("session_id", "created_at", "id") ');
    await queryRunner.query('CREATE INDEX "idx_webhook_events_account_created" ON "webhook_events"  ("account_id", "created_at", "id") ');
    await queryRunner.query(
      'CREATE TABLE "webhook_deliveries" ("id" uuid NOT NULL, "event_id" uuid NOT NULL, "account_id" uuid, "kind" text NOT NULL, "url" text NOT NULL, "status" text NOT NULL, "attempts" integer NOT NULL DEFAULT \'0\', "next_attempt_at" TIMESTAMP WITH TIME ZONE, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_status_code" integer, "last_error" text, "delivered_at" TIMESTAMP WITH TIME ZONE, "given_up_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "chk_webhook_deliveries_kind" CHECK ("kind" IN (\'account\', \'ops\')), CONSTRAINT "chk_webhook_deliveries_status" CHECK ("status" IN (\'pending\', \'delivered\', \'given_up\')), CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "idx_webhook_deliveries_event" ON "webhook_deliveries"  ("event_id") ');
    await queryRunner.query(
      'CREATE INDEX "idx_webhook_deliveries_expiring" ON "webhook_deliveries"  ("expires_at") WHERE "status" = \'pending\'',
    );
    await queryRunner.query(
      'CREATE INDEX "idx_webhook_deliveries_due" ON "webhook_deliveries"  ("url", "next_attempt_at") WHERE "status" = \'pending\'',
    );
    await queryRunner.query(
      'CREATE TABLE "webhook_attempts" ("id" BIGSERIAL NOT NULL, "delivery_id" uuid NOT NULL, "number" integer NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL, "duration_ms" integer NOT NULL, "status_code" integer, "error" text, "delivered" boolean NOT NULL, CONSTRAINT "PK_2de7e7887ad97de459adab62638" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "idx_webhook_attempts_delivery" ON "webhook_attempts"  ("delivery_id", "number") ');
    await queryRunner.query(
      'CREATE TABLE "webhook_endpoints" ("url" text NOT NULL, "owner" text, "lease_until" TIMESTAMP WITH TIME ZONE, "blocked_until" TIMESTAMP WITH TIME ZONE, "down_breaker" jsonb, "url_breaker" jsonb, "last_error" text, "last_success_at" TIMESTAMP WITH TIME ZONE, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_27b6719e7fa860786caf0f84525" PRIMARY KEY ("url"))',
    );
    await queryRunner.query(
      'CREATE INDEX "idx_webhook_endpoints_blocked" ON "webhook_endpoints"  ("blocked_until") WHERE "blocked_until" IS NOT NULL',
    );
    await queryRunner.query('CREATE INDEX "idx_webhook_endpoints_owner" ON "webhook_endpoints"  ("owner") WHERE "owner" IS NOT NULL');
    await queryRunner.query(
      'CREATE TABLE "webhook_secrets" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "account_id" uuid NOT NULL, "secret" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_50b998e9fcc99aa3e0d8123c154" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "idx_webhook_secrets_account" ON "webhook_secrets"  ("account_id", "created_at") ');
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_webhook_secrets_current" ON "webhook_secrets"  ("account_id") WHERE "expires_at" IS NULL',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_events" ADD CONSTRAINT "FK_eac7925bcd823c210448e216cea" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "FK_27d1ee90033bdafe0ffe8f1be6f" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_attempts" ADD CONSTRAINT "FK_0d56d91d61b827bb2079c256538" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "webhook_secrets" ADD CONSTRAINT "FK_11ba09ab202dbfbf236d62e690a" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "webhook_secrets"');
    // Dependents first; each table takes its indexes and foreign keys with it.
    await queryRunner.query('DROP TABLE "webhook_endpoints"');
    await queryRunner.query('DROP TABLE "webhook_attempts"');
    await queryRunner.query('DROP TABLE "webhook_deliveries"');
    await queryRunner.query('DROP TABLE "webhook_events"');
  }
}
