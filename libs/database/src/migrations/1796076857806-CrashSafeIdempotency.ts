import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CrashSafeIdempotency1796076857806 implements MigrationInterface {
  name = 'CrashSafeIdempotency1796076857806';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "sessions" ADD "idempotency_key" text');
    // Edited from the generated DROP + ADD: kept answers survive (as jsonb's text; new ones as first sent).
    await queryRunner.query('ALTER TABLE "idempotency_records" ALTER COLUMN "response_body" TYPE text USING "response_body"::text');
    await queryRunner.query(
      'CREATE INDEX "idx_sessions_idempotency_key" ON "sessions"  ("account_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."idx_sessions_idempotency_key"');
    await queryRunner.query('ALTER TABLE "idempotency_records" ALTER COLUMN "response_body" TYPE jsonb USING "response_body"::jsonb');
    await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "idempotency_key"');
  }
}
