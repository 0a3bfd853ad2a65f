import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * INTERACTION_TEXT_RETENTION_DAYS erases message bodies from stored webhook events too (the text an
 * `interaction.out_of_session` event carries), in batches, oldest first (apps/broker/src/retention): this partial
 * index holds only the events that still carry a text, so a pass with nothing to erase reads one index page.
 *
 * `IF NOT EXISTS`: on a large table an operator may build it beforehand with `CREATE INDEX CONCURRENTLY` (the
 * same statement, which does not block writes; docs/operations.md#running-n-replicas), and this then does nothing.
 */
export class WebhookEventTextRetention1796201000000 implements MigrationInterface {
  name = 'WebhookEventTextRetention1796201000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "idx_webhook_events_text_kept" ON "webhook_events" ("created_at") WHERE ("data" ->> 'text') IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."idx_webhook_events_text_kept"`);
  }
}
