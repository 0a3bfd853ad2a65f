import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every replica keeps the pool's numbers and each account's allowed destinations in memory
 * (apps/broker/src/destinations/destination-cache.ts); these triggers tell all of them, on the
 * channel broker_destinations, when either changes, whoever changed it (admin API, CLI, import, SQL).
 * Payload: 'pool', or 'account:<id>'. A NOTIFY leaves at commit, so a listener's re-read sees the change.
 */
export class DestinationNotify1796090000000 implements MigrationInterface {
  name = 'DestinationNotify1796090000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION "broker_notify_destination_pool"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN PERFORM pg_notify('broker_destinations', 'pool'); RETURN NULL; END $$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "trg_proxy_numbers_destinations" AFTER INSERT OR DELETE OR UPDATE OF "number" OR TRUNCATE ON "proxy_numbers"
       FOR EACH STATEMENT EXECUTE FUNCTION "broker_notify_destination_pool"()`,
    );
    await queryRunner.query(
      `CREATE FUNCTION "broker_notify_destination_account"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN PERFORM pg_notify('broker_destinations', 'account:' || COALESCE(NEW.id, OLD.id)::text); RETURN NULL; END $$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "trg_accounts_destinations" AFTER INSERT OR DELETE OR UPDATE OF "allowed_countries", "allow_special_rate" ON "accounts"
       FOR EACH ROW EXECUTE FUNCTION "broker_notify_destination_account"()`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER "trg_accounts_destinations" ON "accounts"');
    await queryRunner.query('DROP FUNCTION "broker_notify_destination_account"()');
    await queryRunner.query('DROP TRIGGER "trg_proxy_numbers_destinations" ON "proxy_numbers"');
    await queryRunner.query('DROP FUNCTION "broker_notify_destination_pool"()');
  }
}
