import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An operator can force a provider's breaker OPEN or CLOSED (issue #31 item 4): the request is a row any replica
 * writes and the breaker leader applies (`breaker_overrides`), and the history says which transitions were forced,
 * by whom (`forced_by`) and for which request (`override_id`); `reason` holds the operator's why.
 */
export class BreakerOverrides1796200000000 implements MigrationInterface {
  name = 'BreakerOverrides1796200000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "breaker_overrides" ("id" BIGSERIAL NOT NULL, "provider" text NOT NULL, "state" text NOT NULL, "reason" text NOT NULL,
        "requested_by" text NOT NULL, "requested_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "status" text NOT NULL DEFAULT 'pending',
        "decided_at" TIMESTAMP WITH TIME ZONE, "applied_by" text,
        CONSTRAINT "chk_breaker_overrides_status" CHECK ("status" IN ('pending', 'applied', 'withdrawn')),
        CONSTRAINT "chk_breaker_overrides_state" CHECK ("state" IN ('OPEN', 'CLOSED')),
        CONSTRAINT "PK_338f07bc75b6cd71c7156701348" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_breaker_overrides_pending" ON "breaker_overrides" ("requested_at") WHERE "status" = 'pending'`,
    );
    await queryRunner.query('ALTER TABLE "breaker_transitions" ADD "forced_by" text');
    await queryRunner.query('ALTER TABLE "breaker_transitions" ADD "override_id" bigint');
    await queryRunner.query(
      'CREATE INDEX "idx_breaker_transitions_override" ON "breaker_transitions" ("override_id") WHERE "override_id" IS NOT NULL',
    );
    await queryRunner.query(
      `ALTER TABLE "breaker_transitions" ADD CONSTRAINT "FK_c7715eafbec860a9c70ccd8bf0d" FOREIGN KEY ("override_id")
        REFERENCES "breaker_overrides"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "breaker_transitions" DROP CONSTRAINT "FK_c7715eafbec860a9c70ccd8bf0d"');
    await queryRunner.query('DROP INDEX "public"."idx_breaker_transitions_override"');
    await queryRunner.query('ALTER TABLE "breaker_transitions" DROP COLUMN "override_id"');
    await queryRunner.query('ALTER TABLE "breaker_transitions" DROP COLUMN "forced_by"');
    await queryRunner.query('DROP INDEX "public"."idx_breaker_overrides_pending"');
    await queryRunner.query('DROP TABLE "breaker_overrides"');
  }
}
