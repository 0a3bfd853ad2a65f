import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ClusterLease1796080000000 implements MigrationInterface {
  name = 'ClusterLease1796080000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "cluster_leases" ("name" text NOT NULL, "holder" text NOT NULL, "epoch" bigint NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_810c6a24c3a540e07741d407593" PRIMARY KEY ("name"))',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "cluster_leases"');
  }
}
