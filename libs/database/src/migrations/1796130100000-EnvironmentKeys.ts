import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keys made from BROKER_API_KEY are marked, and a revocation says who made it (issue #29): a start revokes
 * the marked keys its BROKER_API_KEY no longer lists, and brings back one it lists again, unless an
 * operator revoked it. Until now such keys were the ones labelled `BROKER_API_KEY` (the label the start gave
 * them); every earlier revocation was an operator's.
 */
export class EnvironmentKeys1796130100000 implements MigrationInterface {
  name = 'EnvironmentKeys1796130100000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "api_keys" ADD "revoked_by" text');
    await queryRunner.query('ALTER TABLE "api_keys" ADD "from_environment" boolean NOT NULL DEFAULT false');
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "chk_api_keys_revoked_by" CHECK ("revoked_by" IN ('operator', 'removed-from-environment'))`,
    );
    await queryRunner.query(`UPDATE "api_keys" SET "from_environment" = true WHERE "label" = 'BROKER_API_KEY'`);
    await queryRunner.query(`UPDATE "api_keys" SET "revoked_by" = 'operator' WHERE "revoked_at" IS NOT NULL`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "api_keys" DROP CONSTRAINT "chk_api_keys_revoked_by"');
    await queryRunner.query('ALTER TABLE "api_keys" DROP COLUMN "from_environment"');
    await queryRunner.query('ALTER TABLE "api_keys" DROP COLUMN "revoked_by"');
  }
}
