import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `broker_webhook_deliveries_given_up_total` is read from the database on every replica every
 * METRICS_REFRESH_MS (apps/broker/src/metrics/cluster-gauges.repository.ts): counted from this partial
 * index, which holds the given-up rows only and every column the count groups by, instead of a scan of
 * every delivery ever made.
 *
 * `IF NOT EXISTS`: on a large table an operator may build it beforehand with `CREATE INDEX CONCURRENTLY` (the
 * same statement, which does not block writes; docs/operations.md#running-n-replicas), and this then does nothing.
 */
export class GivenUpDeliveriesIndex1796160000000 implements MigrationInterface {
  name = 'GivenUpDeliveriesIndex1796160000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS "idx_webhook_deliveries_given_up" ON "webhook_deliveries" ("kind", "last_status_code", "attempts") WHERE "status" = 'given_up'`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."idx_webhook_deliveries_given_up"`);
  }
}
