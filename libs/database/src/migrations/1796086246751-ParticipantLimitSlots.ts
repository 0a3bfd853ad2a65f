import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ParticipantLimitSlots1796086246751 implements MigrationInterface {
  name = 'ParticipantLimitSlots1796086246751';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "session_participants" ADD "account_id" uuid');
    await queryRunner.query('ALTER TABLE "session_participants" ADD "shared_slot" smallint');
    await queryRunner.query(
      'CREATE UNIQUE INDEX "uq_participant_limit_slot" ON "session_participants"  ("account_id", "number", "shared_slot") WHERE "active" AND "shared_slot" IS NOT NULL',
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."uq_participant_limit_slot"');
    await queryRunner.query('ALTER TABLE "session_participants" DROP COLUMN "shared_slot"');
    await queryRunner.query('ALTER TABLE "session_participants" DROP COLUMN "account_id"');
  }
}
