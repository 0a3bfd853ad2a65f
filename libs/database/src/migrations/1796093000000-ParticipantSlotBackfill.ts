import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The participant limit is now counted from the participant rows' own `account_id` and `shared_slot`
 * (RESERVE_SQL, no join to sessions and proxy_numbers). Rows written before ParticipantLimitSlots have
 * neither: they get their session's account, and the active ones on a shared number a slot above any
 * their (account, number) already holds, so they keep counting towards the limit.
 */
export class ParticipantSlotBackfill1796093000000 implements MigrationInterface {
  name = 'ParticipantSlotBackfill1796093000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE "session_participants" sp SET "account_id" = s."account_id"
         FROM "sessions" s WHERE s."id" = sp."session_id" AND sp."account_id" IS NULL`,
    );
    await queryRunner.query(
      `UPDATE "session_participants" sp SET "shared_slot" = numbered.slot
         FROM (
           SELECT p."session_id", p."number",
                  COALESCE((SELECT max(t."shared_slot") FROM "session_participants" t
                             WHERE t."account_id" = p."account_id" AND t."number" = p."number" AND t."active"), 0)
                  + row_number() OVER (PARTITION BY p."account_id", p."number" ORDER BY p."session_id") AS slot
             FROM "session_participants" p
             JOIN "proxy_numbers" pn ON pn."id" = p."proxy_number_id" AND pn."account_id" IS NULL
            WHERE p."active" AND p."shared_slot" IS NULL AND p."account_id" IS NOT NULL
         ) numbered
        WHERE sp."session_id" = numbered."session_id" AND sp."number" = numbered."number"`,
    );
  }

  public async down(): Promise<void> {
    // The filled-in values are what a reservation writes today; nothing to undo.
  }
}
