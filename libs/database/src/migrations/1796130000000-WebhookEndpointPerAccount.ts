import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook endpoint state (down mode, per-URL breaker, lease, last error) per (account, URL) instead of per
 * URL (issue #29): a tenant that names another tenant's receiver no longer shares its state.
 *
 * Existing rows keep their meaning: each URL's state is copied to every account that has deliveries to it
 * (a down URL stays down for each of them until its next trial, the breaker keeps its grown wait), and the
 * row itself stays, without an account, only where the operator's OPS_WEBHOOK_URL deliveries use that URL.
 * The lease is copied too, so a lane working on the URL keeps it until it ends. Replicas of the previous
 * version cannot work on the new table (their `ON CONFLICT (url)` has no constraint to match): deploy with
 * every replica stopped, or expect their delivery cycles to fail (and log it) until they are replaced.
 */
export class WebhookEndpointPerAccount1796130000000 implements MigrationInterface {
  name = 'WebhookEndpointPerAccount1796130000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "webhook_endpoints" ADD "id" uuid NOT NULL DEFAULT gen_random_uuid()');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" ADD "account_id" uuid');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "PK_27b6719e7fa860786caf0f84525"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "PK_054c4cfb95223732f5939d2d546" PRIMARY KEY ("id")');
    await queryRunner.query(
      `INSERT INTO "webhook_endpoints" ("account_id", "url", "owner", "lease_until", "blocked_until", "down_breaker", "url_breaker",
                                        "last_error", "last_success_at", "updated_at")
       SELECT pair."account_id", e."url", e."owner", e."lease_until", e."blocked_until", e."down_breaker", e."url_breaker",
              e."last_error", e."last_success_at", e."updated_at"
         FROM "webhook_endpoints" e
         JOIN (SELECT DISTINCT "url", "account_id" FROM "webhook_deliveries" WHERE "account_id" IS NOT NULL) pair ON pair."url" = e."url"
        WHERE e."account_id" IS NULL`,
    );
    await queryRunner.query(
      `DELETE FROM "webhook_endpoints" e
        WHERE e."account_id" IS NULL
          AND NOT EXISTS (SELECT 1 FROM "webhook_deliveries" d WHERE d."url" = e."url" AND d."account_id" IS NULL)`,
    );
    await queryRunner.query('DROP INDEX "public"."idx_webhook_deliveries_due"');
    await queryRunner.query(
      `CREATE INDEX "idx_webhook_deliveries_endpoint_due" ON "webhook_deliveries"  ("url", "account_id", "next_attempt_at") WHERE "status" = 'pending'`,
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_webhook_endpoints_ops_url" ON "webhook_endpoints"  ("url") WHERE "account_id" IS NULL',
    );
    await queryRunner.query('CREATE UNIQUE INDEX "uq_webhook_endpoints_url_account" ON "webhook_endpoints"  ("url", "account_id") ');
    await queryRunner.query(
      'ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "FK_4d6b730495c4aea409766707c49" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "FK_4d6b730495c4aea409766707c49"');
    await queryRunner.query('DROP INDEX "public"."uq_webhook_endpoints_url_account"');
    await queryRunner.query('DROP INDEX "public"."uq_webhook_endpoints_ops_url"');
    await queryRunner.query('DROP INDEX "public"."idx_webhook_deliveries_endpoint_due"');
    await queryRunner.query(
      `CREATE INDEX "idx_webhook_deliveries_due" ON "webhook_deliveries"  ("url", "next_attempt_at") WHERE "status" = 'pending'`,
    );
    // Back to one row per URL: the most recently written state of each.
    await queryRunner.query(
      `DELETE FROM "webhook_endpoints" e USING "webhook_endpoints" newer
        WHERE newer."url" = e."url" AND (newer."updated_at", newer."id") > (e."updated_at", e."id")`,
    );
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "PK_054c4cfb95223732f5939d2d546"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "account_id"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "id"');
    await queryRunner.query('ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "PK_27b6719e7fa860786caf0f84525" PRIMARY KEY ("url")');
  }
}
