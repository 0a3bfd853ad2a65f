import { Injectable } from '@nestjs/common';
import { ProblemException } from '../../common/problem';
import { decodePageCursor, encodePageCursor } from '../../common/pagination/page-cursor';
import { AccountSessions } from './account-sessions';
import type { DeliveryDto, EndpointStateDto } from './dto/delivery.dto';
import type { DeliverySummaryDto, EventDto, EventListDto, ListEventsQueryDto } from './dto/events.dto';
import { WebhookHistoryRepository, type EndpointRecord } from './webhook-history.repository';

const DEFAULT_LIMIT = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

const deliveryNotFound = (): ProblemException =>
  new ProblemException({
    status: 404,
    slug: 'delivery-not-found',
    title: 'Delivery not found',
    detail: 'No webhook delivery with this id exists for your account.',
  });

/** What an account reads about its events and their deliveries; another account's are not there (404). */
@Injectable()
export class WebhookHistory {
  constructor(
    private readonly repository: WebhookHistoryRepository,
    private readonly sessions: AccountSessions,
  ) {}

  async listEvents(accountId: string, query: ListEventsQueryDto): Promise<EventListDto> {
    if (query.session && !(await this.sessionKnown(accountId, query.session)))
      throw new ProblemException({
        status: 404,
        slug: 'session-not-found',
        title: 'Session not found',
        detail: 'No session with this id exists for your account.',
      });
    const limit = query.limit ?? DEFAULT_LIMIT;
    const before = query.cursor ? decodePageCursor(query.cursor) : undefined;
    const rows = await this.repository.events({ accountId, sessionId: query.session, before, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const deliveries = await this.deliveriesOf(page.map((r) => r.id));
    const events: EventDto[] = page.map((r) => ({
      id: r.id,
      type: r.type,
      timestamp: r.createdAt.toISOString(),
      sessionId: r.sessionId,
      data: r.data,
      deliveries: deliveries.get(r.id) ?? [],
    }));
    const last = page[page.length - 1];
    return { events, nextCursor: rows.length > limit ? encodePageCursor(last.createdAt, last.id) : null };
  }

  async getDelivery(accountId: string, id: string): Promise<DeliveryDto> {
    if (!UUID.test(id)) throw deliveryNotFound();
    const delivery = await this.repository.delivery(accountId, id);
    if (!delivery) throw deliveryNotFound();
    const attempts = await this.repository.attempts(id);
    return {
      id: delivery.id,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      sessionId: delivery.sessionId,
      url: delivery.url,
      status: delivery.status,
      createdAt: delivery.createdAt.toISOString(),
      nextAttemptAt: delivery.status === 'pending' ? iso(delivery.nextAttemptAt) : null,
      expiresAt: delivery.expiresAt.toISOString(),
      deliveredAt: iso(delivery.deliveredAt),
      givenUpAt: iso(delivery.givenUpAt),
      attempts: attempts.map((a) => ({
        number: a.number,
        startedAt: a.startedAt.toISOString(),
        durationMs: a.durationMs,
        statusCode: a.statusCode,
        error: a.error,
        delivered: a.delivered,
      })),
      endpoint: delivery.endpoint ? endpointState(delivery.endpoint) : null,
    };
  }

  /** Whether the account has (or had: its events outlive it) a session with this id. */
  private async sessionKnown(accountId: string, sessionId: string): Promise<boolean> {
    return (await this.sessions.exists(accountId, sessionId)) || this.repository.hasSessionEvents(accountId, sessionId);
  }

  private async deliveriesOf(eventIds: string[]): Promise<Map<string, DeliverySummaryDto[]>> {
    const byEvent = new Map<string, DeliverySummaryDto[]>();
    for (const r of await this.repository.deliveriesOf(eventIds)) {
      const list = byEvent.get(r.eventId) ?? [];
      list.push({
        id: r.id,
        url: r.url,
        status: r.status,
        attempts: r.attempts,
        nextAttemptAt: r.status === 'pending' ? iso(r.nextAttemptAt) : null,
        deliveredAt: iso(r.deliveredAt),
      });
      byEvent.set(r.eventId, list);
    }
    return byEvent;
  }
}

function endpointState(endpoint: EndpointRecord): EndpointStateDto {
  const down = endpoint.downBreaker?.state ?? 'CLOSED';
  const url = endpoint.urlBreaker?.state ?? 'CLOSED';
  const condition =
    url === 'OPEN' ? 'breaker-open' : down === 'OPEN' ? 'down' : down === 'HALF_OPEN' || url === 'HALF_OPEN' ? 'trial' : 'healthy';
  return {
    condition,
    blockedUntil: condition === 'healthy' ? null : iso(endpoint.blockedUntil),
    breakerState: url,
    lastError: endpoint.lastError,
  };
}
