/**
 * The outbox: an event and its delivery are inserted by the caller's own transaction, so they exist exactly
 * when the change that caused them is committed. The delivery's URL is noted in the caller's `DeliveryWakes`,
 * which wakes the delivery workers once that transaction has committed (delivery-wakes.ts: no NOTIFY inside
 * the transaction); nothing is sent from inside the transaction.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Clock } from '@app/clock';
import { webhookBodyBytes } from '../delivery/signed-request';
import { SESSION_EVENT_TYPES, type OpsEventType, type SessionEventType } from '../entities';
import type { DeliveryWakes } from './delivery-wakes';

/**
 * The event type of a callback in Twilio's format (the Twilio-Proxy-compatible API's, compat/twilio-proxy): its
 * data is `{ url, params }`, delivered as those form parameters with `X-Twilio-Signature` (signed-request.ts),
 * by the same worker, with the same rules, as every webhook. Not an event of the account's own: the event
 * history leaves it out.
 */
export const TWILIO_CALLBACK_EVENT_TYPE = 'twilio-proxy.callback';

/** A Twilio-format callback to record beside a session event. */
export interface TwilioCallbackInput {
  accountId: string;
  sessionId: string | null;
  url: string;
  /** The form parameters, each once, as Twilio sends them. */
  params: Record<string, string>;
  /** When the broker learned of the thing; unset: now. */
  receivedAt?: Date;
}

/** What a follower may do in the transaction of the event it follows: read, and record Twilio-format callbacks that commit with it. */
export interface FollowingTransaction extends Queryable {
  recordTwilioCallback(callback: TwilioCallbackInput): Promise<void>;
}

/**
 * Told of each session event `record` writes, in its transaction, so what another API owes its users for the
 * same thing (the Twilio-Proxy-compatible API's callbacks) is as durable as the event. A create's
 * `session.created`, which its activation statement writes, is not followed.
 */
export interface SessionEventFollower {
  follow(event: SessionEventInput, tx: FollowingTransaction): Promise<void>;
}

/** Largest webhook body sent (docs/webhooks.md#delivery-rules: 256 KB). */
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;

export interface SessionEventInput {
  type: SessionEventType;
  accountId: string;
  /** Null for an account's event about no session of its own (`interaction.out_of_session` on its dedicated number). */
  sessionId: string | null;
  /** The session's callback URL; null → the account's default; neither → the event is stored, not delivered. */
  callbackUrl: string | null;
  data: Record<string, unknown>;
  /** When the broker learned of the thing (an inbound message's arrival, …); unset: now. Sent as `data.receivedAt`. */
  receivedAt?: Date;
}

/** An EntityManager or a DataSource: whatever runs one statement. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

export interface OpsEventInput {
  type: OpsEventType;
  data: Record<string, unknown>;
  /** When the transition happened; unset: now. Sent as `data.receivedAt`. */
  receivedAt?: Date;
}

export interface RecordedEvent {
  eventId: string;
  /** Null when there was nowhere to deliver it. */
  deliveryId: string | null;
  /** Where it is delivered; null with deliveryId. */
  url: string | null;
}

export class WebhookBodyTooLargeError extends RangeError {
  override name = 'WebhookBodyTooLargeError';
}

const INSERT = `
  WITH target AS (
    SELECT COALESCE($5::text, (SELECT default_callback_url FROM accounts WHERE id = $2)) AS url
  ), ev AS (
    INSERT INTO webhook_events (id, account_id, session_id, type, data, created_at) VALUES ($1, $2, $3, $4, $6, $7)
  ), dl AS (
    INSERT INTO webhook_deliveries (id, event_id, account_id, kind, url, status, attempts, next_attempt_at, expires_at, created_at, updated_at)
    SELECT $8, $1, $2, $10, t.url, 'pending', 0, $7, $9, $7, $7 FROM target t WHERE t.url IS NOT NULL
    RETURNING url
  )
  SELECT url FROM dl`;

export class EventOutbox {
  private readonly followers: SessionEventFollower[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly settings: { giveUpAfterMs: number; opsWebhookUrl?: string },
  ) {}

  /**
   * Records a session event, and its delivery, in the caller's transaction (`manager`); the delivery's URL goes
   * into `wakes`, which the caller sends once that transaction has committed (`transactionThenWake`).
   */
  async record(manager: EntityManager, event: SessionEventInput, wakes: DeliveryWakes): Promise<RecordedEvent> {
    if (!(SESSION_EVENT_TYPES as readonly string[]).includes(event.type)) throw new TypeError(`unknown session event type "${event.type}"`);
    const recorded = await this.insert(
      manager,
      event.type,
      event.accountId,
      event.sessionId,
      event.callbackUrl,
      'account',
      event.data,
      event.receivedAt,
    );
    wakes.add(recorded.url);
    for (const follower of this.followers)
      await follower.follow(event, {
        query: (sql, params) => manager.query(sql, params),
        recordTwilioCallback: (callback) => this.recordTwilioCallback(manager, callback, wakes),
      });
    return recorded;
  }

  /** From now on `follower` is told of each session event this outbox records. */
  follow(follower: SessionEventFollower): void {
    this.followers.push(follower);
  }

  private async recordTwilioCallback(manager: EntityManager, callback: TwilioCallbackInput, wakes: DeliveryWakes): Promise<void> {
    const data = { url: callback.url, params: callback.params };
    const recorded = await this.insert(
      manager,
      TWILIO_CALLBACK_EVENT_TYPE,
      callback.accountId,
      callback.sessionId,
      callback.url,
      'account',
      data,
      callback.receivedAt,
    );
    wakes.add(recorded.url);
  }

  /**
   * The ten parameters of a session event and its delivery, in the order INSERT takes them, for a statement
   * that writes both itself (a create's activation: broker_activate_session); the type and size are checked
   * as `record` checks them.
   */
  sessionEventParameters(event: SessionEventInput): { params: unknown[]; eventId: string; deliveryId: string } {
    if (!(SESSION_EVENT_TYPES as readonly string[]).includes(event.type)) throw new TypeError(`unknown session event type "${event.type}"`);
    return this.prepare(event.type, event.accountId, event.sessionId, event.callbackUrl, 'account', event.data, event.receivedAt);
  }

  /**
   * Records an ops event for OPS_WEBHOOK_URL, its URL into `wakes` as `record` does; without that URL there is
   * nobody to tell and nothing is stored.
   */
  async recordOps(manager: EntityManager, event: OpsEventInput, wakes: DeliveryWakes): Promise<RecordedEvent | null> {
    if (event.type !== 'provider.state_changed') throw new TypeError(`unknown ops event type "${String(event.type)}"`);
    if (!this.settings.opsWebhookUrl) return null;
    const recorded = await this.insert(manager, event.type, null, null, this.settings.opsWebhookUrl, 'ops', event.data, event.receivedAt);
    wakes.add(recorded.url);
    return recorded;
  }

  private async insert(
    manager: EntityManager,
    type: string,
    accountId: string | null,
    sessionId: string | null,
    callbackUrl: string | null,
    kind: 'account' | 'ops',
    eventData: Record<string, unknown>,
    receivedAt: Date | undefined,
  ): Promise<RecordedEvent> {
    const { params, eventId, deliveryId } = this.prepare(type, accountId, sessionId, callbackUrl, kind, eventData, receivedAt);
    const rows = (await manager.query(INSERT, params)) as Array<{ url: string }>;
    return rows.length > 0 ? { eventId, deliveryId, url: rows[0].url } : { eventId, deliveryId: null, url: null };
  }

  /** The ten parameters of an event and its delivery, the body's size checked. */
  private prepare(
    type: string,
    accountId: string | null,
    sessionId: string | null,
    callbackUrl: string | null,
    kind: 'account' | 'ops',
    eventData: Record<string, unknown>,
    receivedAt: Date | undefined,
  ): { params: unknown[]; eventId: string; deliveryId: string } {
    const now = this.clock.now();
    const eventId = randomUUID();
    const deliveryId = randomUUID();
    const createdAt = new Date(now);
    // Receivers order events by `receivedAt` inside `data` (docs/webhooks.md#delivery-rules): every event carries it.
    const data = { ...eventData, receivedAt: (receivedAt ?? createdAt).toISOString() };
    const dataJson = JSON.stringify(data);
    const size = webhookBodyBytes({ eventId, type, eventCreatedAt: createdAt }, dataJson);
    if (size > MAX_WEBHOOK_BODY_BYTES)
      throw new WebhookBodyTooLargeError(`a ${type} webhook body would be ${size} bytes; at most ${MAX_WEBHOOK_BODY_BYTES} are sent`);
    const params = [
      eventId,
      accountId,
      sessionId,
      type,
      callbackUrl,
      dataJson,
      createdAt.toISOString(),
      deliveryId,
      new Date(now + this.settings.giveUpAfterMs).toISOString(),
      kind,
    ];
    return { params, eventId, deliveryId };
  }
}
