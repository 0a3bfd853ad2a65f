import type { MigrationInterface, QueryRunner } from 'typeorm';

export class DedicatedNumbers1796082780206 implements MigrationInterface {
  name = 'DedicatedNumbers1796082780206';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "proxy_numbers" ADD "account_id" uuid');
    await queryRunner.query('CREATE INDEX "idx_proxy_numbers_account" ON "proxy_numbers"  ("account_id") WHERE "account_id" IS NOT NULL');
    await queryRunner.query(
      'ALTER TABLE "proxy_numbers" ADD CONSTRAINT "FK_ca3dacdcbca954db2743c2e1ce8" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE SET NULL ON UPDATE NO ACTION',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "proxy_numbers" DROP CONSTRAINT "FK_ca3dacdcbca954db2743c2e1ce8"');
    await queryRunner.query('DROP INDEX "public"."idx_proxy_numbers_account"');
    await queryRunner.query('ALTER TABLE "proxy_numbers" DROP COLUMN "account_id"');
  }
}
