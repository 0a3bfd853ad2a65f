import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { BreakerSnapshot } from '@app/circuit-breaker';
import type { PageCursor } from '../../common/pagination/page-cursor';
import { TWILIO_CALLBACK_EVENT_TYPE } from '../events/event-outbox';

interface EventRecord {
  readonly id: string;
  readonly type: string;
  readonly sessionId: string | null;
  readonly data: Record<string, unknown>;
  readonly createdAt: Date;
}

interface DeliverySummaryRecord {
  readonly id: string;
  readonly eventId: string;
  readonly url: string;
  readonly status: string;
  readonly attempts: number;
  readonly nextAttemptAt: Date | null;
  readonly deliveredAt: Date | null;
}

/** The endpoint's state, as the delivery worker last wrote it. */
export interface EndpointRecord {
  readonly blockedUntil: Date | null;
  readonly downBreaker: BreakerSnapshot | null;
  readonly urlBreaker: BreakerSnapshot | null;
  readonly lastError: string | null;
}

interface DeliveryRecord {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly sessionId: string | null;
  readonly url: string;
  readonly status: string;
  readonly createdAt: Date;
  readonly nextAttemptAt: Date | null;
  readonly expiresAt: Date;
  readonly deliveredAt: Date | null;
  readonly givenUpAt: Date | null;
  /** The state of the account's endpoint for this URL; null until the worker has worked on it. */
  readonly endpoint: EndpointRecord | null;
}

interface AttemptRecord {
  readonly number: number;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly delivered: boolean;
}

interface EventPageQuery {
  readonly accountId: string;
  /** Only this session's events. */
  readonly sessionId?: string;
  /** Only events before this one in the order (newest first). */
  readonly before?: PageCursor;
  readonly limit: number;
}

/** The SQL of what an account reads about its events and their deliveries; every read is scoped to the account. */
@Injectable()
export class WebhookHistoryRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Up to `limit` events, newest first. */
  async events(query: EventPageQuery): Promise<EventRecord[]> {
    const params: unknown[] = [query.accountId, query.limit, TWILIO_CALLBACK_EVENT_TYPE];
    // The Twilio-format callbacks retell the account's events for the compat API; they are not events of their own.
    let where = 'e.account_id = $1 AND e.type <> $3';
    if (query.sessionId) {
      params.push(query.sessionId);
      where += ` AND e.session_id = $${params.length}`;
    }
    if (query.before) {
      params.push(query.before.at.toISOString(), query.before.id);
      where += ` AND (e.created_at, e.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
    }
    const rows = await this.dataSource.query<
      Array<{ id: string; type: string; session_id: string | null; data: Record<string, unknown>; created_at: Date }>
    >(
      `SELECT e.id, e.type, e.session_id, e.data, e.created_at FROM webhook_events e
        WHERE ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT $2`,
      params,
    );
    return rows.map((r) => ({ id: r.id, type: r.type, sessionId: r.session_id, data: r.data, createdAt: r.created_at }));
  }

  /** The deliveries of these events. */
  async deliveriesOf(eventIds: readonly string[]): Promise<DeliverySummaryRecord[]> {
    if (eventIds.length === 0) return [];
    const rows = await this.dataSource.query<
      Array<{
        id: string;
        event_id: string;
        url: string;
        status: string;
        attempts: number;
        next_attempt_at: Date | null;
        delivered_at: Date | null;
      }>
    >(
      `SELECT id, event_id, url, status, attempts, next_attempt_at, delivered_at FROM webhook_deliveries WHERE event_id = ANY($1::uuid[])`,
      [eventIds],
    );
    return rows.map((r) => ({
      id: r.id,
      eventId: r.event_id,
      url: r.url,
      status: r.status,
      attempts: r.attempts,
      nextAttemptAt: r.next_attempt_at,
      deliveredAt: r.delivered_at,
    }));
  }

  /** The account's delivery with its event and its endpoint's state; null when the account has none with this id. */
  async delivery(accountId: string, id: string): Promise<DeliveryRecord | null> {
    const [row] = await this.dataSource.query<
      Array<{
        id: string;
        event_id: string;
        type: string;
        session_id: string | null;
        url: string;
        status: string;
        created_at: Date;
        next_attempt_at: Date | null;
        expires_at: Date;
        delivered_at: Date | null;
        given_up_at: Date | null;
        endpoint_url: string | null;
        blocked_until: Date | null;
        down_breaker: BreakerSnapshot | null;
        url_breaker: BreakerSnapshot | null;
        endpoint_error: string | null;
      }>
    >(
      `SELECT d.id, d.event_id, ev.type, ev.session_id, d.url, d.status, d.created_at, d.next_attempt_at, d.expires_at,
              d.delivered_at, d.given_up_at,
              ep.url AS endpoint_url, ep.blocked_until, ep.down_breaker, ep.url_breaker, ep.last_error AS endpoint_error
         FROM webhook_deliveries d
         JOIN webhook_events ev ON ev.id = d.event_id
         -- The endpoint of this account's deliveries to the URL: another account's state for the same URL is not there.
         LEFT JOIN webhook_endpoints ep ON ep.url = d.url AND ep.account_id = d.account_id
        WHERE d.id = $1 AND d.account_id = $2`,
      [id, accountId],
    );
    if (!row) return null;
    return {
      id: row.id,
      eventId: row.event_id,
      eventType: row.type,
      sessionId: row.session_id,
      url: row.url,
      status: row.status,
      createdAt: row.created_at,
      nextAttemptAt: row.next_attempt_at,
      expiresAt: row.expires_at,
      deliveredAt: row.delivered_at,
      givenUpAt: row.given_up_at,
      endpoint:
        row.endpoint_url === null
          ? null
          : { blockedUntil: row.blocked_until, downBreaker: row.down_breaker, urlBreaker: row.url_breaker, lastError: row.endpoint_error },
    };
  }

  /** The delivery's attempts, in order. */
  async attempts(deliveryId: string): Promise<AttemptRecord[]> {
    const rows = await this.dataSource.query<
      Array<{ number: number; started_at: Date; duration_ms: number; status_code: number | null; error: string | null; delivered: boolean }>
    >(
      `SELECT number, started_at, duration_ms, status_code, error, delivered FROM webhook_attempts WHERE delivery_id = $1 ORDER BY number, id`,
      [deliveryId],
    );
    return rows.map((a) => ({
      number: a.number,
      startedAt: a.started_at,
      durationMs: a.duration_ms,
      statusCode: a.status_code,
      error: a.error,
      delivered: a.delivered,
    }));
  }

  /** Whether the account has events of a session with this id (they outlive the session). */
  async hasSessionEvents(accountId: string, sessionId: string): Promise<boolean> {
    const [row] = await this.dataSource.query<Array<{ known: boolean }>>(
      `SELECT EXISTS (SELECT 1 FROM webhook_events WHERE session_id = $1 AND account_id = $2) AS known`,
      [sessionId, accountId],
    );
    return row.known;
  }
}
