import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pool usage as counts kept with the sessions (issue #34 item 3). The pool-usage refresh (every
 * POOL_USAGE_REFRESH_MS on every replica) counted the active sessions per number with a scan of every active
 * session: 10.7 / 48.9 / 117 / 154 ms at 10k / 50k / 100k / 200k of them, on both cores from 100k.
 *
 * Now a trigger on `sessions` writes one row to `proxy_number_load_changes` (+1 or −1, its number and channels)
 * whenever a session becomes `active`, stops being `active`, or (active) moves to another number or other channels,
 * whatever the writer: a create, a close, the sweeper, an account's deletion cascading, a rescue; a TRUNCATE of
 * `sessions` empties both tables. The rows are
 * appended (a sequence key, no other index), so concurrent creates on one number never wait for each other as they
 * would on one counter row. The refresh reads `proxy_number_loads` (one row per number and channels) plus the
 * changes not folded yet, and folds those into the totals now and then (one replica at a time). What it costs
 * follows the pool's size and the creates since the last fold, not the active sessions. Sessions past their
 * inactiveAt count until the sweeper marks them expired (within SESSION_SWEEP_INTERVAL_MS), where the scan left
 * them out at once.
 *
 * The totals start from the active sessions there are now.
 */
export class PoolUsageCounts1796192000000 implements MigrationInterface {
  name = 'PoolUsageCounts1796192000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "proxy_number_loads" ("proxy_number_id" uuid NOT NULL, "channels" text NOT NULL, "active" integer NOT NULL, CONSTRAINT "PK_31b93be937ae61e27dd8405059f" PRIMARY KEY ("proxy_number_id", "channels"))',
    );
    await queryRunner.query(
      'CREATE TABLE "proxy_number_load_changes" ("id" BIGSERIAL NOT NULL, "proxy_number_id" uuid NOT NULL, "channels" text NOT NULL, "delta" smallint NOT NULL, CONSTRAINT "PK_0b8a42a8cb76bec41b967512892" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      `CREATE FUNCTION "broker_count_session_load"() RETURNS trigger
       LANGUAGE plpgsql AS $fn$
       BEGIN
         IF TG_OP <> 'INSERT' AND OLD.status = 'active' THEN
           INSERT INTO proxy_number_load_changes (proxy_number_id, channels, delta)
           VALUES (OLD.proxy_number_id, array_to_string(OLD.channels, '+'), -1);
         END IF;
         IF TG_OP <> 'DELETE' AND NEW.status = 'active' THEN
           INSERT INTO proxy_number_load_changes (proxy_number_id, channels, delta)
           VALUES (NEW.proxy_number_id, array_to_string(NEW.channels, '+'), 1);
         END IF;
         RETURN NULL;
       END
       $fn$`,
    );
    // Each only where the count moves: an update of anything else (an interaction's time, a release) calls nothing.
    await queryRunner.query(
      `CREATE TRIGGER "trg_sessions_load_insert" AFTER INSERT ON "sessions"
       FOR EACH ROW WHEN (NEW.status = 'active') EXECUTE FUNCTION "broker_count_session_load"()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "trg_sessions_load_update" AFTER UPDATE OF status, proxy_number_id, channels ON "sessions"
       FOR EACH ROW WHEN ((OLD.status = 'active' OR NEW.status = 'active')
                          AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.proxy_number_id IS DISTINCT FROM NEW.proxy_number_id
                               OR OLD.channels IS DISTINCT FROM NEW.channels))
       EXECUTE FUNCTION "broker_count_session_load"()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "trg_sessions_load_delete" AFTER DELETE ON "sessions"
       FOR EACH ROW WHEN (OLD.status = 'active') EXECUTE FUNCTION "broker_count_session_load"()`,
    );
    // A TRUNCATE (the benchmarks' reset, an operator's) fires no row trigger: it empties the counts with the sessions.
    await queryRunner.query(
      `CREATE FUNCTION "broker_clear_session_load"() RETURNS trigger
       LANGUAGE plpgsql AS $fn$
       BEGIN
         DELETE FROM proxy_number_load_changes;
         DELETE FROM proxy_number_loads;
         RETURN NULL;
       END
       $fn$`,
    );
    await queryRunner.query(
      `CREATE TRIGGER "trg_sessions_load_truncate" AFTER TRUNCATE ON "sessions"
       FOR EACH STATEMENT EXECUTE FUNCTION "broker_clear_session_load"()`,
    );
    await queryRunner.query(
      `INSERT INTO proxy_number_loads (proxy_number_id, channels, active)
       SELECT proxy_number_id, array_to_string(channels, '+'), count(*) FROM sessions WHERE status = 'active' GROUP BY 1, 2`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER "trg_sessions_load_truncate" ON "sessions"');
    await queryRunner.query('DROP FUNCTION "broker_clear_session_load"()');
    await queryRunner.query('DROP TRIGGER "trg_sessions_load_delete" ON "sessions"');
    await queryRunner.query('DROP TRIGGER "trg_sessions_load_update" ON "sessions"');
    await queryRunner.query('DROP TRIGGER "trg_sessions_load_insert" ON "sessions"');
    await queryRunner.query('DROP FUNCTION "broker_count_session_load"()');
    await queryRunner.query('DROP TABLE "proxy_number_load_changes"');
    await queryRunner.query('DROP TABLE "proxy_number_loads"');
  }
}
