import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A create's activation and its `session.created` event (apps/broker/src/sessions/session.repository.ts,
 * activateWithEvent) as a function, for the reason and with the settings of broker_reserve_session
 * (ReserveSessionFunction): parsed and planned once per connection, one generic plan of index lookups
 * only. One call, so one statement and one commit as before: the session becomes active only if it was
 * still pending, and then, in the same transaction, the event, its delivery to the session's callback URL
 * (else the account's default; neither: stored, not delivered) and the NOTIFY that wakes the delivery
 * workers (sent at commit). The event's and delivery's values are EventOutbox's (its ten parameters, in
 * its order). Returns whether the session was activated.
 */
export class ActivateSessionFunction1796097000000 implements MigrationInterface {
  name = 'ActivateSessionFunction1796097000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION "broker_activate_session"(
         p_session_id uuid, p_binding_id text,
         p_event_id uuid, p_account_id uuid, p_event_session_id uuid, p_type text, p_callback_url text, p_data jsonb,
         p_created_at timestamptz, p_delivery_id uuid, p_delivery_expires_at timestamptz, p_kind text)
       RETURNS boolean
       LANGUAGE plpgsql VOLATILE
       SET plan_cache_mode = force_generic_plan
       SET enable_seqscan = off
       AS $fn$
       DECLARE
         target text;
       BEGIN
         UPDATE sessions SET status = 'active', binding_id = p_binding_id WHERE id = p_session_id AND status = 'pending';
         IF NOT FOUND THEN
           RETURN false;
         END IF;
         target := COALESCE(p_callback_url, (SELECT a.default_callback_url FROM accounts a WHERE a.id = p_account_id));
         INSERT INTO webhook_events (id, account_id, session_id, type, data, created_at)
         VALUES (p_event_id, p_account_id, p_event_session_id, p_type, p_data, p_created_at);
         IF target IS NOT NULL THEN
           INSERT INTO webhook_deliveries (id, event_id, account_id, kind, url, status, attempts, next_attempt_at, expires_at, created_at, updated_at)
           VALUES (p_delivery_id, p_event_id, p_account_id, p_kind, target, 'pending', 0, p_created_at, p_delivery_expires_at, p_created_at,
                   p_created_at);
           PERFORM pg_notify('webhook_delivery', target);
         END IF;
         RETURN true;
       END
       $fn$`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'DROP FUNCTION "broker_activate_session"(uuid, text, uuid, uuid, uuid, text, text, jsonb, timestamptz, uuid, timestamptz, text)',
    );
  }
}
