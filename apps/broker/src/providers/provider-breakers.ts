/**
 * One breaker per provider, held in memory on every replica: admission reads it synchronously, with
 * no database on the way. A `ProviderBreaker` keeps its identity and its streams when it adopts a
 * state decided elsewhere (the cluster's leader, or the database after a restart): subscribers of
 * `state$` and `transitions$` never resubscribe. On a replica that follows the leader the breakers
 * follow (`setFollowing`): they count the cluster's outcomes but make no transition, so a replica
 * that takes over decides on live counts. The operator's disabled flag lives beside it.
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  CircuitBreaker,
  telephonyPolicy,
  type Admission,
  type BreakerPolicy,
  type BreakerSnapshot,
  type BreakerStatus,
  type BreakerTransition,
  type Outcome,
} from '@app/circuit-breaker';
import { BehaviorSubject, Subject, asyncScheduler, map, merge, switchMap, type Observable, type SchedulerLike } from 'rxjs';
import { BROKER_CONFIG, type BreakerSettings, type BrokerConfig } from '../config';
import { ProviderAdapters } from './provider-adapters';
import { UnknownProviderError } from './unknown-provider.error';

/**
 * The scheduler the provider breakers read their time from: the system's, one object per app, so an
 * end-to-end test can move its own broker's breaker time (say, past the close gate) without waiting.
 */
export const BREAKER_SCHEDULER = Symbol('BREAKER_SCHEDULER');

export function systemBreakerScheduler(): SchedulerLike {
  return { now: () => asyncScheduler.now(), schedule: asyncScheduler.schedule.bind(asyncScheduler) as SchedulerLike['schedule'] };
}

/**
 * A transition of a provider's breaker; `adopted` when it was decided elsewhere and only taken over here;
 * `overrideId`: the operator's request it applied, when it was forced here.
 */
export interface ProviderTransition extends BreakerTransition {
  provider: string;
  adopted: boolean;
  overrideId: string | null;
}

export interface ProviderHealth {
  name: string;
  disabled: boolean;
  disabledReason: string | null;
  status: BreakerStatus;
}

class ProviderBreaker {
  private readonly current$: BehaviorSubject<CircuitBreaker>;
  private readonly adoptedSubject = new Subject<ProviderTransition>();
  /** The request being applied while `force` runs (its transition is emitted synchronously). */
  private forcing: string | null = null;
  readonly state$: Observable<BreakerStatus>;
  readonly transitions$: Observable<ProviderTransition>;

  constructor(
    readonly name: string,
    private readonly build: (snapshot: BreakerSnapshot | null) => CircuitBreaker,
    snapshot: BreakerSnapshot | null,
  ) {
    this.current$ = new BehaviorSubject(build(snapshot));
    this.state$ = this.current$.pipe(switchMap((breaker) => breaker.state$));
    this.transitions$ = merge(
      this.current$.pipe(
        switchMap((breaker) => breaker.transitions$),
        map((t): ProviderTransition => ({ ...t, provider: name, adopted: false, overrideId: this.forcing })),
      ),
      this.adoptedSubject,
    );
  }

  admit(): Admission {
    return this.current$.value.admit();
  }

  record(outcome: Outcome): void {
    this.current$.value.record(outcome);
  }

  status(): BreakerStatus {
    return this.current$.value.status();
  }

  toJSON(): BreakerSnapshot {
    return this.current$.value.toJSON();
  }

  /** Counts without deciding (see CircuitBreaker.follow), or decides again at once on what it counted. */
  setFollowing(following: boolean): void {
    if (following) this.current$.value.follow();
    else this.current$.value.lead();
  }

  /** Carries on from `snapshot`; a change of state is announced as an adopted transition. */
  adopt(snapshot: BreakerSnapshot): void {
    const previous = this.current$.value;
    const before = previous.status();
    const next = this.build(snapshot);
    this.current$.next(next);
    previous.dispose();
    const after = next.status();
    if (after.state !== before.state || after.since !== before.since) {
      this.adoptedSubject.next({
        provider: this.name,
        from: before.state,
        to: after.state,
        reason: after.reason,
        at: after.since,
        lastError: after.lastError,
        forcedBy: after.forcedBy,
        adopted: true,
        overrideId: null,
      });
    }
  }

  /** An operator's decision, on the replica that decides (see CircuitBreaker.force); `overrideId` names their request. */
  force(to: 'OPEN' | 'CLOSED', reason: string, by: string, overrideId: string | null): void {
    this.forcing = overrideId;
    try {
      this.current$.value.force(to, reason, by);
    } finally {
      this.forcing = null;
    }
  }

  /** Announces the status again (say, the disabled flag changed beside it). */
  reannounce(): void {
    this.current$.next(this.current$.value);
  }

  dispose(): void {
    this.current$.value.dispose();
    this.current$.complete();
    this.adoptedSubject.complete();
  }
}

@Injectable()
export class ProviderBreakers implements OnApplicationShutdown {
  private readonly logger = new Logger(ProviderBreakers.name);
  private readonly breakers = new Map<string, ProviderBreaker>();
  private readonly disabled = new Map<string, BehaviorSubject<{ disabled: boolean; reason: string | null }>>();
  private following = false;
  readonly policy: BreakerPolicy;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    adapters: ProviderAdapters,
    @Inject(BREAKER_SCHEDULER) private readonly scheduler: SchedulerLike,
  ) {
    this.policy = providerBreakerPolicy(config.breaker);
    for (const name of adapters.names) {
      this.breakers.set(name, new ProviderBreaker(name, (snapshot) => this.newBreaker(name, snapshot), null));
      this.disabled.set(name, new BehaviorSubject<{ disabled: boolean; reason: string | null }>({ disabled: false, reason: null }));
    }
  }

  names(): string[] {
    return [...this.breakers.keys()];
  }

  /** The breakers' clock (BREAKER_SCHEDULER): what `since` and `openedAt` are read on. */
  now(): number {
    return this.scheduler.now();
  }

  has(name: string): boolean {
    return this.breakers.has(name);
  }

  get(name: string): ProviderBreaker {
    const breaker = this.breakers.get(name);
    if (!breaker) throw new UnknownProviderError(name);
    return breaker;
  }

  isDisabled(name: string): boolean {
    return this.flag(name).value.disabled;
  }

  disabled$(name: string): Observable<boolean> {
    return this.flag(name).pipe(map((f) => f.disabled));
  }

  /** Sets the operator's flag in memory (persisting it is the caller's); false when nothing changed. */
  setDisabled(name: string, disabled: boolean, reason: string | null): boolean {
    const flag = this.flag(name);
    const next = { disabled, reason: disabled ? reason : null };
    if (flag.value.disabled === next.disabled && flag.value.reason === next.reason) return false;
    flag.next(next);
    this.get(name).reannounce();
    return true;
  }

  /**
   * Another replica decides the breakers (true), or this one does (false): followed breakers count every
   * outcome and make no transition; leading again, each makes at once the transition its counts call for.
   * A breaker built later (an adopted state) starts so too.
   */
  setFollowing(following: boolean): void {
    if (following === this.following) return;
    this.following = following;
    for (const breaker of this.breakers.values()) breaker.setFollowing(following);
  }

  health(name: string): ProviderHealth {
    const { disabled, reason } = this.flag(name).value;
    return { name, disabled, disabledReason: reason, status: this.get(name).status() };
  }

  healthAll(): ProviderHealth[] {
    return this.names().map((name) => this.health(name));
  }

  /** Each provider's health, on every breaker state change or enable/disable, starting with the current one. */
  health$(name: string): Observable<ProviderHealth> {
    return this.get(name).state$.pipe(map((status) => ({ ...this.health(name), status })));
  }

  transitions$(): Observable<ProviderTransition> {
    return merge(...[...this.breakers.values()].map((b) => b.transitions$));
  }

  onApplicationShutdown(): void {
    for (const breaker of this.breakers.values()) breaker.dispose();
    for (const flag of this.disabled.values()) flag.complete();
  }

  private flag(name: string): BehaviorSubject<{ disabled: boolean; reason: string | null }> {
    const flag = this.disabled.get(name);
    if (!flag) throw new UnknownProviderError(name);
    return flag;
  }

  private newBreaker(name: string, snapshot: BreakerSnapshot | null): CircuitBreaker {
    const options = { scheduler: this.scheduler, following: this.following };
    if (!snapshot) return new CircuitBreaker(this.policy, options);
    try {
      return CircuitBreaker.fromJSON(this.policy, snapshot, options);
    } catch (error) {
      this.logger.error(`provider ${name}: saved breaker state unusable (${(error as Error).message}); starting CLOSED`);
      return new CircuitBreaker(this.policy, options);
    }
  }
}

/** Each provider's breaker (docs/design.md#provider-breaker), from the BREAKER_* settings. */
export function providerBreakerPolicy(b: BreakerSettings): BreakerPolicy {
  return telephonyPolicy({
    consecutiveFailures: b.consecutiveFailures,
    windowMs: b.windowMs,
    windowErrorRate: b.windowErrorRate,
    windowMinCalls: b.windowMinCalls,
    halfOpenAfterPasses: b.halfOpenAfterPasses,
    halfOpenProbeShare: b.halfOpenProbeShare,
    closeSuccessRate: b.closeSuccessRate,
    closeAfterMs: b.closeAfterMs,
    closeMinProbes: b.closeMinProbes,
    slowCallMs: b.slowCallMs,
  });
}
