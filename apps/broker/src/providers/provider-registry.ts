/**
 * The providers in routing order, each with its adapter and its circuit breaker. Every provider
 * call goes through `call()`, so its outcome feeds the provider's breaker and the metrics; new
 * sessions ask `candidates()` which providers to try, in order.
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  CircuitBreaker,
  telephonyPolicy,
  type BreakerPolicy,
  type BreakerSnapshot,
  type BreakerStatus,
  type BreakerTransition,
} from '@app/circuit-breaker';
import { createProvider, type CpaasProvider, type ProviderFailure, type ProviderOperation, type ProviderResult } from '@app/cpaas';
import { BehaviorSubject, Subject, Subscription, asyncScheduler, map, switchMap, type Observable, type SchedulerLike } from 'rxjs';
import { BROKER_CONFIG, type BreakerSettings, type BrokerConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { BreakerStateStore } from './breaker-state.store';

export interface ProviderHealth {
  name: string;
  disabled: boolean;
  disabledReason: string | null;
  status: BreakerStatus;
}

/** A provider a new session may try, and whether that try is a HALF_OPEN probe. */
export interface RoutingCandidate {
  provider: CpaasProvider;
  probe: boolean;
}

export interface ProviderTransition extends BreakerTransition {
  provider: string;
}

interface ProviderEntry {
  adapter: CpaasProvider;
  /** The current breaker; replaced when another replica's state is adopted. */
  breaker$: BehaviorSubject<CircuitBreaker>;
  disabled$: BehaviorSubject<boolean>;
  disabledReason: string | null;
  wiring: Subscription;
}

/**
 * The scheduler the provider breakers read their time from: the system's, one object per app, so an
 * end-to-end test can move its own broker's breaker time (say, past the close gate) without waiting.
 */
export const BREAKER_SCHEDULER = Symbol('BREAKER_SCHEDULER');

export function systemBreakerScheduler(): SchedulerLike {
  return { now: () => asyncScheduler.now(), schedule: asyncScheduler.schedule.bind(asyncScheduler) as SchedulerLike['schedule'] };
}

const STATE_GAUGE: Record<BreakerStatus['state'], number> = { CLOSED: 0, HALF_OPEN: 1, OPEN: 2 };

@Injectable()
export class ProviderRegistry implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ProviderRegistry.name);
  private readonly entries = new Map<string, ProviderEntry>();
  private readonly order: string[];
  private readonly policy: BreakerPolicy;
  private readonly transitionSubject = new Subject<ProviderTransition>();
  /** Every breaker transition of every provider, as it happens in this process. */
  readonly transitions$: Observable<ProviderTransition> = this.transitionSubject.asObservable();

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly store: BreakerStateStore,
    private readonly metrics: BrokerMetrics,
    @Inject(BREAKER_SCHEDULER) private readonly scheduler: SchedulerLike,
  ) {
    this.order = config.providers.map((p) => p.name);
    this.policy = providerBreakerPolicy(config.breaker);
  }

  /** Restores each provider's persisted breaker and disabled flag, so a restart mid-outage stays OPEN. */
  async onModuleInit(): Promise<void> {
    const saved = await this.store.loadAll();
    for (const providerConfig of this.config.providers) {
      // loadConfig requires it for PROVIDERS; the all-local start makes one before building the app.
      if (providerConfig.adapter === 'sim' && !this.config.simWebhookSecret)
        throw new Error('SIM_WEBHOOK_SECRET must be set for a sim provider');
      const adapter = createProvider(providerConfig, {
        timeoutMs: this.config.providerCallTimeoutMs,
        // Only the sim adapter reads it; real vendors sign with their own credentials.
        webhookSecret: this.config.simWebhookSecret ?? '',
        publicUrl: this.config.publicUrl,
      });
      const state = saved.get(providerConfig.name);
      const entry: ProviderEntry = {
        adapter,
        breaker$: new BehaviorSubject(this.newBreaker(providerConfig.name, state?.snapshot)),
        disabled$: new BehaviorSubject(state?.disabled ?? false),
        disabledReason: state?.disabledReason ?? null,
        wiring: new Subscription(),
      };
      this.entries.set(providerConfig.name, entry);
      this.wire(providerConfig.name, entry);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    for (const entry of this.entries.values()) {
      entry.wiring.unsubscribe();
      entry.breaker$.value.dispose();
      entry.breaker$.complete();
      entry.disabled$.complete();
      await entry.adapter.close();
    }
    this.transitionSubject.complete();
    await this.store.flush();
  }

  names(): string[] {
    return [...this.order];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  adapter(name: string): CpaasProvider {
    return this.entry(name).adapter;
  }

  /**
   * The providers a new session tries, in order, each admitted by its breaker as it is reached
   * (admission has effects: a HALF_OPEN breaker counts towards its probe share). When no breaker
   * admits at all, every enabled provider is tried in order anyway rather than refusing outright.
   */
  *candidates(): Generator<RoutingCandidate> {
    let admittedAny = false;
    const enabled = this.order.filter((name) => !this.entry(name).disabled$.value);
    for (const name of enabled) {
      const entry = this.entry(name);
      const admission = entry.breaker$.value.admit();
      if (!admission.admitted) continue;
      admittedAny = true;
      yield { provider: entry.adapter, probe: admission.probe };
    }
    if (admittedAny) return;
    for (const name of enabled) yield { provider: this.entry(name).adapter, probe: false };
  }

  /** Runs one provider operation and feeds its outcome to the provider's breaker and the metrics. */
  async call<T>(
    name: string,
    operation: ProviderOperation,
    probe: boolean,
    run: (provider: CpaasProvider) => Promise<ProviderResult<T>>,
  ): Promise<ProviderResult<T>> {
    const result = await run(this.entry(name).adapter);
    this.metrics.providerCallDuration.observe({ provider: name, operation }, result.latencyMs / 1000);
    this.record(name, operation, probe, result.ok ? { ok: true, latencyMs: result.latencyMs } : result);
    return result;
  }

  /**
   * Feeds one outcome to the provider's breaker and the metrics: a call's answer, or one the vendor
   * reports later (a bridged call's setup, docs/design.md#relay), which has no latency of ours.
   */
  record(
    name: string,
    operation: ProviderOperation,
    probe: boolean,
    outcome: { ok: true; latencyMs: number } | { ok: false; failure: ProviderFailure },
  ): void {
    const entry = this.entry(name);
    if (outcome.ok) {
      this.metrics.providerCalls.inc({ provider: name, operation, outcome: 'success', counts_against_provider: 'false' });
      entry.breaker$.value.record({ kind: 'success', durationMs: outcome.latencyMs, probe });
      return;
    }
    const counts = outcome.failure.countsAgainstProvider;
    this.metrics.providerCalls.inc({ provider: name, operation, outcome: outcome.failure.cause, counts_against_provider: String(counts) });
    // A failure caused by the caller's own input says nothing about the provider's health.
    if (counts) entry.breaker$.value.record({ kind: 'failure', reason: outcome.failure.reason, probe });
  }

  /**
   * A HALF_OPEN probe for a provider that keeps no sessions (a create makes no call there): one
   * health check, recorded as the probe's outcome; not awaited, so the create does not wait on it.
   */
  probeInBackground(name: string): void {
    this.call(name, 'health', true, (p) => p.healthCheck()).catch((error: unknown) =>
      this.logger.warn(`provider ${name}: probe health check crashed: ${(error as Error).message}`),
    );
  }

  /** One health check of the provider, recorded as a health-check outcome. */
  async healthCheck(name: string): Promise<ProviderResult<void>> {
    const entry = this.entry(name);
    let result: ProviderResult<void>;
    try {
      result = await entry.adapter.healthCheck();
    } catch (error) {
      result = {
        ok: false,
        latencyMs: 0,
        failure: { countsAgainstProvider: true, cause: 'transport', reason: `${name}: health check crashed: ${(error as Error).message}` },
      };
    }
    this.metrics.providerCallDuration.observe({ provider: name, operation: 'health' }, result.latencyMs / 1000);
    this.metrics.healthProbes.inc({ provider: name, result: result.ok ? 'pass' : 'fail' });
    entry.breaker$.value.record(result.ok ? { kind: 'health-pass' } : { kind: 'health-fail', reason: result.failure.reason });
    return result;
  }

  health(name: string): ProviderHealth {
    const entry = this.entry(name);
    return { name, disabled: entry.disabled$.value, disabledReason: entry.disabledReason, status: entry.breaker$.value.status() };
  }

  healthAll(): ProviderHealth[] {
    return this.order.map((name) => this.health(name));
  }

  /** Each provider's health, on every breaker state change or enable/disable, starting with the current one. */
  health$(name: string): Observable<ProviderHealth> {
    const entry = this.entry(name);
    return entry.breaker$.pipe(
      switchMap((breaker) => breaker.state$),
      map((status) => ({ name, disabled: entry.disabled$.value, disabledReason: entry.disabledReason, status })),
    );
  }

  disabled$(name: string): Observable<boolean> {
    return this.entry(name).disabled$.asObservable();
  }

  async setDisabled(name: string, disabled: boolean, reason: string | null): Promise<void> {
    const entry = this.entry(name);
    await this.store.saveDisabled(name, disabled, reason);
    this.applyDisabled(name, disabled, reason);
    entry.breaker$.next(entry.breaker$.value); // re-announce health with the new flag
  }

  /** Another replica changed this provider: take its breaker state and disabled flag. */
  adopt(name: string, snapshot: BreakerSnapshot | null, disabled: boolean, disabledReason: string | null): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.applyDisabled(name, disabled, disabledReason);
    if (snapshot) {
      const previous = entry.breaker$.value;
      entry.breaker$.next(this.newBreaker(name, snapshot));
      previous.dispose();
    } else {
      entry.breaker$.next(entry.breaker$.value);
    }
  }

  private applyDisabled(name: string, disabled: boolean, reason: string | null): void {
    const entry = this.entry(name);
    entry.disabledReason = disabled ? reason : null;
    if (entry.disabled$.value !== disabled) entry.disabled$.next(disabled);
    this.metrics.providerDisabled.set({ provider: name }, disabled ? 1 : 0);
  }

  /** Metrics and persistence follow whichever breaker is current. */
  private wire(name: string, entry: ProviderEntry): void {
    this.metrics.providerDisabled.set({ provider: name }, entry.disabled$.value ? 1 : 0);
    entry.wiring.add(
      entry.breaker$
        .pipe(switchMap((breaker) => breaker.state$))
        .subscribe((status) => this.metrics.breakerState.set({ provider: name }, STATE_GAUGE[status.state])),
    );
    entry.wiring.add(
      entry.breaker$
        .pipe(switchMap((breaker) => breaker.transitions$.pipe(map((transition) => ({ breaker, transition })))))
        .subscribe(({ breaker, transition }) => {
          this.metrics.breakerTransitions.inc({ provider: name, from: transition.from, to: transition.to });
          this.logger.warn(
            { provider: name, from: transition.from, to: transition.to, reason: transition.reason, lastError: transition.lastError },
            `provider ${name} breaker ${transition.from} → ${transition.to}: ${transition.reason}`,
          );
          this.store.recordTransition(name, transition, breaker.toJSON());
          this.transitionSubject.next({ provider: name, ...transition });
        }),
    );
  }

  private newBreaker(name: string, snapshot: BreakerSnapshot | undefined | null): CircuitBreaker {
    const options = { scheduler: this.scheduler };
    if (!snapshot) return new CircuitBreaker(this.policy, options);
    try {
      return CircuitBreaker.fromJSON(this.policy, snapshot, options);
    } catch (error) {
      this.logger.error(`provider ${name}: saved breaker state unusable (${(error as Error).message}); starting CLOSED`);
      return new CircuitBreaker(this.policy, options);
    }
  }

  private entry(name: string): ProviderEntry {
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`unknown provider "${name}"`);
    return entry;
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
