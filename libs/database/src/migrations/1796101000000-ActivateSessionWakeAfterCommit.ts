import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The activation without its NOTIFY: `broker_activate_session_wake_after` is broker_activate_session
 * (ActivateSessionFunction) less the `pg_notify`, and it returns the URL whose delivery it recorded, for
 * the caller to wake the delivery workers with once the activation has committed (activateWithEvent,
 * apps/broker/src/sessions/session.repository.ts).
 *
 * Why: a transaction that has sent a NOTIFY takes one database-wide lock in its pre-commit and holds it
 * through its commit, WAL flush included, so such commits run one at a time and never share a flush.
 * Measured on this machine (PostgreSQL 18, the two statements of a create driven directly at 16
 * connections, every session with a callback URL): 355-410 creates/s with the NOTIFY in the activation,
 * 690-731 without it, the same delivery row written either way. A NOTIFY sent on its own afterwards holds
 * that lock only for a commit that writes no WAL of its own (so it does not wait for a flush).
 *
 * broker_activate_session stays, unchanged, for replicas of the previous version during a rolling deploy.
 */
export class ActivateSessionWakeAfterCommit1796101000000 implements MigrationInterface {
  name = 'ActivateSessionWakeAfterCommit1796101000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION "broker_activate_session_wake_after"(
         p_session_id uuid, p_binding_id text,
         p_event_id uuid, p_account_id uuid, p_event_session_id uuid, p_type text, p_callback_url text, p_data jsonb,
         p_created_at timestamptz, p_delivery_id uuid, p_delivery_expires_at timestamptz, p_kind text)
       RETURNS TABLE (changed boolean, delivery_url text)
       LANGUAGE plpgsql VOLATILE
       SET plan_cache_mode = force_generic_plan
       SET enable_seqscan = off
       AS $fn$
       DECLARE
         target text;
       BEGIN
         UPDATE sessions SET status = 'active', binding_id = p_binding_id WHERE id = p_session_id AND status = 'pending';
         IF NOT FOUND THEN
           changed := false;
           RETURN NEXT;
           RETURN;
         END IF;
         target := COALESCE(p_callback_url, (SELECT a.default_callback_url FROM accounts a WHERE a.id = p_account_id));
         INSERT INTO webhook_events (id, account_id, session_id, type, data, created_at)
         VALUES (p_event_id, p_account_id, p_event_session_id, p_type, p_data, p_created_at);
         IF target IS NOT NULL THEN
           INSERT INTO webhook_deliveries (id, event_id, account_id, kind, url, status, attempts, next_attempt_at, expires_at, created_at, updated_at)
           VALUES (p_delivery_id, p_event_id, p_account_id, p_kind, target, 'pending', 0, p_created_at, p_delivery_expires_at, p_created_at,
                   p_created_at);
         END IF;
         changed := true;
         delivery_url := target;
         RETURN NEXT;
       END
       $fn$`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'DROP FUNCTION "broker_activate_session_wake_after"(uuid, text, uuid, uuid, uuid, text, text, jsonb, timestamptz, uuid, timestamptz, text)',
    );
  }
}
