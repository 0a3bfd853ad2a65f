import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the cluster last health-checked each provider, by the database's clock: the breaker leader claims a
 * check against it (fenced) and is refused one that would come less than an interval after the last, so the
 * cadence holds across a change of leader (docs/operations.md, "Several replicas").
 */
export class ProviderLastCheck1796110000000 implements MigrationInterface {
  name = 'ProviderLastCheck1796110000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "provider_states" ADD "last_check_at" TIMESTAMP WITH TIME ZONE');
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "provider_states" DROP COLUMN "last_check_at"');
  }
}
