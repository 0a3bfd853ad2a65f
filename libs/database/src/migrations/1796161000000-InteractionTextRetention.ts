import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * INTERACTION_TEXT_RETENTION_DAYS erases message bodies past their age in batches, oldest first
 * (apps/broker/src/retention): this partial index holds only the interactions that still have a text, so a
 * pass that finds nothing to erase reads one index page, however many interactions the table keeps.
 *
 * `IF NOT EXISTS`: on a large table an operator may build it beforehand with `CREATE INDEX CONCURRENTLY` (the
 * same statement, which does not block writes; docs/operations.md#running-n-replicas), and this then does nothing.
 */
export class InteractionTextRetention1796161000000 implements MigrationInterface {
  name = 'InteractionTextRetention1796161000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "idx_interactions_text_kept" ON "interactions" ("created_at") WHERE "text" IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."idx_interactions_text_kept"`);
  }
}
