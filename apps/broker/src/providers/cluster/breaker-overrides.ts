/**
 * An operator forces a provider's breaker OPEN or CLOSED (docs/operations.md#forcing-a-breaker). Any replica
 * takes the request; the breaker leader applies it, as it decides every transition, so no replica's write can
 * race the leader's own decisions:
 *
 * 1. The replica that was asked writes the request (`breaker_overrides`, pending) and NOTIFYs it, in one
 *    transaction.
 * 2. The leader, on that NOTIFY (or at the start of its term, or when its LISTEN connection came back, for what it
 *    may have missed), claims it under its fence, then forces its breaker: a transition like any other, persisted
 *    with who forced it and the request's id, and adopted by every replica within a second.
 * 3. The replica that was asked waits for that transition's row, then for its own breaker to show it, and answers.
 *    No leader within OVERRIDE_WAIT_MS: it withdraws the request, which no leader can take afterwards (the claim and
 *    the withdrawal each change a pending row only), and answers 503: nothing changed.
 */
import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { asyncScheduler, catchError, filter, firstValueFrom, of, Subscription, timeout, timer, type SchedulerLike } from 'rxjs';
import { ProblemException } from '../../common/problem';
import { ListenClient } from '../../database/listen-client';
import { ProviderBreakers, type ProviderHealth } from '../provider-breakers';
import { BREAKER_OVERRIDE_CHANNEL, ProviderStateRepository } from '../provider-state.repository';
import { BreakerLeadership } from './breaker-leadership';

/** How long a request waits for a leader to take it; also the most a leader takes one late (by the database's clock). */
const OVERRIDE_WAIT_MS = 5_000;
/** After the leader took it, how long its transition may take to be recorded. */
const RECORD_WAIT_MS = 5_000;
/** How long this replica's breaker may take to adopt the recorded transition (every replica does within a second). */
const ADOPT_WAIT_MS = 2_000;
const POLL_MS = 50;

/** The scheduler of the waits, if not `asyncScheduler` (nothing provides it in the app). */
const OVERRIDE_SCHEDULER = Symbol('OVERRIDE_SCHEDULER');

@Injectable()
export class BreakerOverrides implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BreakerOverrides.name);
  private readonly subscriptions = new Subscription();
  private unlisten: Array<() => void> = [];
  /** The leader applies requests one at a time, in the order it claimed them. */
  private applying: Promise<void> = Promise.resolve();
  private term: number | null = null;

  constructor(
    private readonly repository: ProviderStateRepository,
    private readonly breakers: ProviderBreakers,
    private readonly leadership: BreakerLeadership,
    private readonly listener: ListenClient,
    @Optional() @Inject(OVERRIDE_SCHEDULER) private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {}

  onApplicationBootstrap(): void {
    this.unlisten.push(this.listener.subscribe(BREAKER_OVERRIDE_CHANNEL, (payload) => this.onRequest(payload)));
    this.unlisten.push(this.listener.onReconnect(() => this.applyPending()));
    this.subscriptions.add(
      this.leadership.changes$.subscribe((now) => {
        const term = now.fence?.epoch ?? null;
        if (term !== null && term !== this.term) this.applyPending();
        this.term = term;
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriptions.unsubscribe();
    for (const off of this.unlisten.splice(0)) off();
    await this.applying;
  }

  /**
   * Has the leader force `provider`'s breaker to `state`, and answers the provider's health once this replica shows
   * the forced state; a 503 problem when no leader took the request in time (then nothing changed) or its transition
   * was not recorded.
   */
  async force(provider: string, state: 'OPEN' | 'CLOSED', reason: string, by: string): Promise<ProviderHealth> {
    const id = await this.repository.requestOverride(provider, state, reason, by);
    const at = await this.recorded(id);
    await firstValueFrom(
      this.breakers.get(provider).state$.pipe(
        filter((status) => status.since >= at),
        timeout({ first: ADOPT_WAIT_MS, scheduler: this.scheduler }),
        catchError(() => of(null)),
      ),
    );
    return this.breakers.health(provider);
  }

  /** When the transition the request made happened, once recorded. */
  private async recorded(id: string): Promise<number> {
    const start = this.scheduler.now();
    for (;;) {
      const outcome = await this.repository.overrideOutcome(id);
      const waited = this.scheduler.now() - start;
      if (outcome.status === 'applied' && outcome.transitionAt !== null) return outcome.transitionAt;
      if (outcome.status === 'withdrawn') throw noLeader();
      if (outcome.status === 'pending' && waited >= OVERRIDE_WAIT_MS) {
        if (await this.repository.withdrawOverride(id)) throw noLeader();
        continue; // a leader took it meanwhile
      }
      if (outcome.status === 'applied' && waited >= OVERRIDE_WAIT_MS + RECORD_WAIT_MS) throw notRecorded();
      await firstValueFrom(timer(POLL_MS, this.scheduler));
    }
  }

  private onRequest(payload: string): void {
    let id: unknown;
    try {
      ({ id } = JSON.parse(payload) as { id?: unknown });
    } catch {
      return;
    }
    if (typeof id === 'string' && /^\d{1,18}$/.test(id)) this.apply(id);
  }

  /** Every request still pending, as a new leader or one that may have missed notifications. */
  private applyPending(): void {
    this.apply(undefined);
  }

  /** On the leader only: claims the request (or every pending one) under the fence, then forces the breakers. */
  private apply(id: string | undefined): void {
    this.applying = this.applying.then(async () => {
      const fence = this.leadership.current.fence;
      if (!fence) return;
      try {
        const claimed = await this.repository.claimOverrides(fence, this.leadership.replica, this.breakers.names(), OVERRIDE_WAIT_MS, id);
        for (const request of claimed) {
          // Led no more since the claim: a follower's transition would not be persisted, and the request's replica answers 503.
          if (this.leadership.current.fence?.epoch !== fence.epoch) {
            this.logger.warn(`override ${request.id} of ${request.provider} not applied: this replica no longer leads the breakers`);
            continue;
          }
          this.breakers.get(request.provider).force(request.state, request.reason, request.requestedBy, request.id);
        }
      } catch (error) {
        this.logger.warn(`breaker overrides not applied: ${(error as Error).message}`);
      }
    });
  }
}

function noLeader(): ProblemException {
  return new ProblemException({
    status: 503,
    slug: 'breaker-leader-unavailable',
    title: 'No breaker leader',
    detail: `No breaker leader took the override within ${OVERRIDE_WAIT_MS / 1000} s (the lease is changing hands, or no replica can reach the database); nothing changed. Try again.`,
  });
}

function notRecorded(): ProblemException {
  return new ProblemException({
    status: 503,
    slug: 'breaker-override-unconfirmed',
    title: 'Override not confirmed',
    detail:
      'The breaker leader took the override but its transition was not recorded in time (the leader lost its lease or the database); GET /v1/health/cpaas/history says whether it was. Try again if not.',
  });
}
