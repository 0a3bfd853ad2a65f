import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InteractionEvents1796023173236 implements MigrationInterface {
  name = 'InteractionEvents1796023173236';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "interactions" ADD "provider_event_id" text');
    await queryRunner.query(
      'CREATE INDEX "idx_interactions_provider_ref" ON "interactions"  ("provider_ref") WHERE "provider_ref" IS NOT NULL',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_interactions_provider_event" ON "interactions"  ("session_id", "provider_event_id") WHERE "provider_event_id" IS NOT NULL',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."uq_interactions_provider_event"');
    await queryRunner.query('DROP INDEX "public"."idx_interactions_provider_ref"');
    await queryRunner.query('ALTER TABLE "interactions" DROP COLUMN "provider_event_id"');
  }
}
