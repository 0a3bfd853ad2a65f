import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { BreakerSnapshot } from '@app/circuit-breaker';
import { ProblemException } from '../../common/problem';
import { decodePageCursor, encodePageCursor } from '../../common/pagination/page-cursor';
import type { DeliveryDto, EndpointStateDto } from './dto/delivery.dto';
import type { DeliverySummaryDto, EventDto, EventListDto, ListEventsQueryDto } from './dto/events.dto';

const DEFAULT_LIMIT = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

export const deliveryNotFound = (): ProblemException =>
  new ProblemException({
    status: 404,
    slug: 'delivery-not-found',
    title: 'Delivery not found',
    detail: 'No webhook delivery with this id exists for your account.',
  });

/** What an account reads about its events and their deliveries; another account's are not there (404). */
@Injectable()
export class WebhookHistory {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async listEvents(accountId: string, query: ListEventsQueryDto): Promise<EventListDto> {
    if (query.session && !(await this.sessionKnown(accountId, query.session)))
      throw new ProblemException({
        status: 404,
        slug: 'session-not-found',
        title: 'Session not found',
        detail: 'No session with this id exists for your account.',
      });
    const limit = query.limit ?? DEFAULT_LIMIT;
    const params: unknown[] = [accountId, limit + 1];
    let where = 'e.account_id = $1';
    if (query.session) {
      params.push(query.session);
      where += ` AND e.session_id = $${params.length}`;
    }
    if (query.cursor) {
      const cursor = decodePageCursor(query.cursor);
      params.push(cursor.at.toISOString(), cursor.id);
      where += ` AND (e.created_at, e.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
    }
    const rows = (await this.dataSource.query(
      `SELECT e.id, e.type, e.session_id, e.data, e.created_at FROM webhook_events e
        WHERE ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT $2`,
      params,
    )) as Array<{ id: string; type: string; session_id: string | null; data: Record<string, unknown>; created_at: Date }>;
    const page = rows.slice(0, limit);
    const deliveries = await this.deliveriesOf(page.map((r) => r.id));
    const events: EventDto[] = page.map((r) => ({
      id: r.id,
      type: r.type,
      timestamp: r.created_at.toISOString(),
      sessionId: r.session_id,
      data: r.data,
      deliveries: deliveries.get(r.id) ?? [],
    }));
    const last = page[page.length - 1];
    return { events, nextCursor: rows.length > limit ? encodePageCursor(last.created_at, last.id) : null };
  }

  async getDelivery(accountId: string, id: string): Promise<DeliveryDto> {
    if (!UUID.test(id)) throw deliveryNotFound();
    const [row] = (await this.dataSource.query(
      `SELECT d.id, d.event_id, ev.type, ev.session_id, d.url, d.status, d.created_at, d.next_attempt_at, d.expires_at,
              d.delivered_at, d.given_up_at,
              ep.url AS endpoint_url, ep.blocked_until, ep.down_breaker, ep.url_breaker, ep.last_error AS endpoint_error
         FROM webhook_deliveries d
         JOIN webhook_events ev ON ev.id = d.event_id
         LEFT JOIN webhook_endpoints ep ON ep.url = d.url
        WHERE d.id = $1 AND d.account_id = $2`,
      [id, accountId],
    )) as Array<{
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
    }>;
    if (!row) throw deliveryNotFound();
    const attempts = (await this.dataSource.query(
      `SELECT number, started_at, duration_ms, status_code, error, delivered FROM webhook_attempts WHERE delivery_id = $1 ORDER BY number, id`,
      [id],
    )) as Array<{
      number: number;
      started_at: Date;
      duration_ms: number;
      status_code: number | null;
      error: string | null;
      delivered: boolean;
    }>;
    return {
      id: row.id,
      eventId: row.event_id,
      eventType: row.type,
      sessionId: row.session_id,
      url: row.url,
      status: row.status,
      createdAt: row.created_at.toISOString(),
      nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
      expiresAt: row.expires_at.toISOString(),
      deliveredAt: iso(row.delivered_at),
      givenUpAt: iso(row.given_up_at),
      attempts: attempts.map((a) => ({
        number: a.number,
        startedAt: a.started_at.toISOString(),
        durationMs: a.duration_ms,
        statusCode: a.status_code,
        error: a.error,
        delivered: a.delivered,
      })),
      endpoint: row.endpoint_url !== null ? endpointState(row) : null,
    };
  }

  private async sessionKnown(accountId: string, sessionId: string): Promise<boolean> {
    const [row] = (await this.dataSource.query(
      `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1 AND account_id = $2)
           OR EXISTS (SELECT 1 FROM webhook_events WHERE session_id = $1 AND account_id = $2) AS known`,
      [sessionId, accountId],
    )) as Array<{ known: boolean }>;
    return row.known;
  }

  private async deliveriesOf(eventIds: string[]): Promise<Map<string, DeliverySummaryDto[]>> {
    const byEvent = new Map<string, DeliverySummaryDto[]>();
    if (eventIds.length === 0) return byEvent;
    const rows = (await this.dataSource.query(
      `SELECT id, event_id, url, status, attempts, next_attempt_at, delivered_at FROM webhook_deliveries WHERE event_id = ANY($1::uuid[])`,
      [eventIds],
    )) as Array<{
      id: string;
      event_id: string;
      url: string;
      status: string;
      attempts: number;
      next_attempt_at: Date | null;
      delivered_at: Date | null;
    }>;
    for (const r of rows) {
      const list = byEvent.get(r.event_id) ?? [];
      list.push({
        id: r.id,
        url: r.url,
        status: r.status,
        attempts: r.attempts,
        nextAttemptAt: r.status === 'pending' ? iso(r.next_attempt_at) : null,
        deliveredAt: iso(r.delivered_at),
      });
      byEvent.set(r.event_id, list);
    }
    return byEvent;
  }
}

function endpointState(row: {
  blocked_until: Date | null;
  down_breaker: BreakerSnapshot | null;
  url_breaker: BreakerSnapshot | null;
  endpoint_error: string | null;
}): EndpointStateDto {
  const down = row.down_breaker?.state ?? 'CLOSED';
  const url = row.url_breaker?.state ?? 'CLOSED';
  const condition =
    url === 'OPEN' ? 'breaker-open' : down === 'OPEN' ? 'down' : down === 'HALF_OPEN' || url === 'HALF_OPEN' ? 'trial' : 'healthy';
  return {
    condition,
    blockedUntil: condition === 'healthy' ? null : iso(row.blocked_until),
    breakerState: url,
    lastError: row.endpoint_error,
  };
}
