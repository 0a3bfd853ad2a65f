import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An account's default country (issue #30): with it set, participant numbers may be written as their
 * country writes them (`08031234567` with `NG` is +2348031234567). Every replica holds it in the
 * destinations memory, so the accounts trigger of DestinationNotify now fires on it too.
 */
export class AccountDefaultCountry1796140000000 implements MigrationInterface {
  name = 'AccountDefaultCountry1796140000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "accounts" ADD "default_country" text`);
    await queryRunner.query(
      `ALTER TABLE "accounts" ADD CONSTRAINT "chk_accounts_default_country" CHECK ("default_country" ~ '^[A-Z]{2}$')`,
    );
    await queryRunner.query('DROP TRIGGER "trg_accounts_destinations" ON "accounts"');
    await queryRunner.query(
      `CREATE TRIGGER "trg_accounts_destinations" AFTER INSERT OR DELETE OR UPDATE OF "allowed_countries", "allow_special_rate", "default_country" ON "accounts"
       FOR EACH ROW EXECUTE FUNCTION "broker_notify_destination_account"()`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER "trg_accounts_destinations" ON "accounts"');
    await queryRunner.query(
      `CREATE TRIGGER "trg_accounts_destinations" AFTER INSERT OR DELETE OR UPDATE OF "allowed_countries", "allow_special_rate" ON "accounts"
       FOR EACH ROW EXECUTE FUNCTION "broker_notify_destination_account"()`,
    );
    await queryRunner.query(`ALTER TABLE "accounts" DROP CONSTRAINT "chk_accounts_default_country"`);
    await queryRunner.query(`ALTER TABLE "accounts" DROP COLUMN "default_country"`);
  }
}
