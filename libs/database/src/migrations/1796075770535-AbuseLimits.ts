import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AbuseLimits1796075770535 implements MigrationInterface {
  name = 'AbuseLimits1796075770535';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "accounts" ADD "allowed_countries" text array');
    await queryRunner.query('ALTER TABLE "accounts" ADD "allow_special_rate" boolean NOT NULL DEFAULT false');
    await queryRunner.query('CREATE INDEX "idx_active_participant_number" ON "session_participants"  ("number") WHERE "active"');
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."idx_active_participant_number"');
    await queryRunner.query('ALTER TABLE "accounts" DROP COLUMN "allow_special_rate"');
    await queryRunner.query('ALTER TABLE "accounts" DROP COLUMN "allowed_countries"');
  }
}
