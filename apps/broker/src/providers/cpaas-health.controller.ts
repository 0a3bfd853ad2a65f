import { Controller, Get, Inject, Query, Req, Sse, type MessageEvent, type OnModuleDestroy } from '@nestjs/common';
import type { Request } from 'express';
import { StreamSlots, clientAddress } from '../common/http';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { unknownProvider } from '../common/problem';
import { Observable, Subject, finalize, interval, map, merge, mergeMap, startWith, takeUntil } from 'rxjs';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { BreakerHistoryDto, BreakerHistoryQueryDto, BreakerTransitionDto, CpaasHealthDto, ProviderHealthDto } from './dto/cpaas-health.dto';
import { PoolUsage } from './pool-usage';
import { ProviderBreakers } from './provider-breakers';
import { ProviderStateRepository } from './provider-state.repository';

/** How often the stream repeats the whole picture, so a live page sees the error rate move. */
const STREAM_SNAPSHOT_MS = 2_000;

@ApiTags('health')
@Controller('v1/health/cpaas')
export class CpaasHealthController implements OnModuleDestroy {
  /** Ends every open stream when the app stops, so shutdown does not wait on live pages. */
  private readonly closing$ = new Subject<void>();
  private readonly startedAt: string;

  constructor(
    private readonly breakers: ProviderBreakers,
    private readonly repository: ProviderStateRepository,
    private readonly leadership: BreakerLeadership,
    private readonly pool: PoolUsage,
    private readonly slots: StreamSlots,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.startedAt = new Date(clock.now()).toISOString();
  }

  @Get()
  @ApiOperation({ summary: 'Breaker state per provider, from memory: no database query, no provider call.' })
  @ApiOkResponse({ type: CpaasHealthDto })
  health(): CpaasHealthDto {
    return this.snapshot();
  }

  /**
   * Server-Sent Events: a `snapshot` (the body of GET /v1/health/cpaas) at once and every 2 s, a
   * `provider` event whenever a provider's breaker changes state or it is enabled/disabled, and a
   * `transition` event for each breaker transition.
   */
  @Sse('stream')
  @ApiOperation({ summary: 'Live breaker state changes (Server-Sent Events).' })
  @ApiProduces('text/event-stream')
  stream(@Req() request: Request): Observable<MessageEvent> {
    // Capped per address and in total (429 / 503 beyond); the slot is given back when the client goes.
    const release = this.slots.acquire(clientAddress(request));
    const providerEvents = this.breakers.names().map((name) =>
      this.breakers.health$(name).pipe(
        map((health): MessageEvent => ({
          type: 'provider',
          data: ProviderHealthDto.from(health, this.pool.of(health.name), this.leadership.current),
        })),
      ),
    );
    const transitions = this.breakers
      .transitions$()
      .pipe(map((t): MessageEvent => ({ type: 'transition', data: BreakerTransitionDto.fromLive(t) })));
    const snapshots = interval(STREAM_SNAPSHOT_MS).pipe(
      startWith(0),
      mergeMap(() => [{ type: 'snapshot', data: this.snapshot() } as MessageEvent]),
    );
    return merge(snapshots, ...providerEvents, transitions).pipe(takeUntil(this.closing$), finalize(release));
  }

  onModuleDestroy(): void {
    this.closing$.next();
    this.closing$.complete();
  }

  @Get('history')
  @ApiOperation({ summary: 'Persisted breaker transitions, newest first.' })
  @ApiOkResponse({ type: BreakerHistoryDto })
  async history(@Query() query: BreakerHistoryQueryDto): Promise<BreakerHistoryDto> {
    if (query.provider && !this.breakers.has(query.provider)) {
      throw unknownProvider(query.provider);
    }
    const limit = query.limit ?? 50;
    const rows = await this.repository.history(query.provider, limit + 1, query.cursor);
    const page = rows.slice(0, limit);
    return {
      transitions: page.map((row) => ({
        id: row.id,
        provider: row.provider,
        from: row.from,
        to: row.to,
        reason: row.reason,
        lastError: row.lastError,
        at: row.at.toISOString(),
      })),
      nextCursor: rows.length > limit ? page[page.length - 1].id : null,
    };
  }

  private snapshot(): CpaasHealthDto {
    const leadership = this.leadership.current;
    return {
      providers: this.breakers.healthAll().map((p) => ProviderHealthDto.from(p, this.pool.of(p.name), leadership)),
      replica: this.leadership.replica,
      leader: leadership.leader,
      startedAt: this.startedAt,
      timestamp: new Date(this.clock.now()).toISOString(),
    };
  }
}
