/**
 * The breaker leader's health checks (docs/design.md#provider-breaker, docs/operations.md). Which providers,
 * and how often, follows each one's breaker:
 *
 * - OPEN or HALF_OPEN: every BREAKER_HEALTH_INTERVAL_MS, any provider (OPEN → HALF_OPEN after N passes; in
 *   HALF_OPEN a failing check re-opens).
 * - CLOSED: every BREAKER_CLOSED_CHECK_INTERVAL_MS (0: never), a provider that keeps no sessions. A create
 *   makes no call there, so a vendor gone dark (no webhooks, so no relay either) would feed its breaker
 *   nothing; a failing check counts as a call-setup failure, and the 5th in a row opens it.
 *
 * Each provider has its own timer: its next check is due one interval after its last one, or after this
 * replica saw it enter its state, whichever is later. One check per interval per provider holds for the
 * cluster, across a change of leader too: before each check the leader claims it in PostgreSQL, under its
 * fence, and the claim is refused while the cluster's last claimed check of that provider is less than the
 * interval old; the refusal says when it is due. Only the
 * leader checks, or a replica cut off from the database, which decides alone on its own time. Never two
 * checks at once for one provider. A check that fails or crashes is an outcome for the breaker, never an
 * error for the app; after each, the leader persists the breaker (its pass count, its failures).
 */
import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { asyncScheduler, Subscription, type SchedulerLike } from 'rxjs';
import type { BreakerState } from '@app/circuit-breaker';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { BreakerStateStore } from './breaker-state.store';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { ProviderBreakers } from './provider-breakers';
import { ProviderRegistry } from './provider-registry';
import { ProviderStateRepository, type HealthCheckClaim } from './provider-state.repository';

/** The scheduler of the checks' cadence, if not `asyncScheduler` (nothing provides it in the app). */
const HEALTH_CHECK_SCHEDULER = Symbol('HEALTH_CHECK_SCHEDULER');

/** What the prober knows of one provider, on this replica's clock. */
interface Cadence {
  state: BreakerState | null;
  /** When this replica saw the provider enter its state. */
  enteredAt: number;
  /** When this replica last began a check of it. */
  checkedAt: number | null;
  /** The cluster's answer to a refused claim: not before then. */
  notBefore: number;
  timer: Subscription | null;
  inFlight: Promise<void> | null;
}

@Injectable()
export class HealthProber implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(HealthProber.name);
  private readonly cadence = new Map<string, Cadence>();
  private readonly subscriptions = new Subscription();
  private stopped = false;
  /** Since when this replica has decided alone (scope "replica"), on the scheduler's clock; null in the cluster. */
  private aloneSince: number | null = null;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(ProviderRegistry) private readonly registry: Pick<ProviderRegistry, 'healthCheck' | 'keepsSessions'>,
    @Inject(ProviderBreakers) private readonly breakers: Pick<ProviderBreakers, 'names' | 'get'>,
    @Inject(BreakerLeadership) private readonly leadership: Pick<BreakerLeadership, 'decidesHere' | 'current' | 'changes$'>,
    @Inject(BreakerStateStore) private readonly store: Pick<BreakerStateStore, 'recordSnapshot'>,
    @Inject(ProviderStateRepository) private readonly repository: Pick<ProviderStateRepository, 'claimHealthCheck'>,
    /** Where the cadence's time and timers come from; a test passes a virtual one. */
    @Optional() @Inject(HEALTH_CHECK_SCHEDULER) private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {}

  onApplicationBootstrap(): void {
    for (const name of this.breakers.names()) {
      const cadence: Cadence = { state: null, enteredAt: this.scheduler.now(), checkedAt: null, notBefore: 0, timer: null, inFlight: null };
      this.cadence.set(name, cadence);
      this.subscriptions.add(
        this.breakers.get(name).state$.subscribe(({ state }) => {
          if (state === cadence.state) return; // announced again (the disabled flag), not a new state
          cadence.state = state;
          cadence.enteredAt = this.scheduler.now();
          this.arm(name);
        }),
      );
    }
    // Leading, or no longer: every timer is armed again or cancelled.
    this.subscriptions.add(
      this.leadership.changes$.subscribe(({ scope }) => {
        this.aloneSince = scope === 'replica' ? (this.aloneSince ?? this.scheduler.now()) : null;
        this.breakers.names().forEach((name) => this.arm(name));
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.subscriptions.unsubscribe();
    for (const cadence of this.cadence.values()) cadence.timer?.unsubscribe();
    await this.settled();
  }

  /** Resolves once the checks in progress (if any) have finished. */
  async settled(): Promise<void> {
    await Promise.all([...this.cadence.values()].flatMap((c) => (c.inFlight ? [c.inFlight] : [])));
  }

  /**
   * Checks now, once, every provider that its state has checked (tests and ops trigger one), whatever its
   * cadence; on the leader or a replica cut off only. Resolves once they have finished.
   */
  async tick(): Promise<void> {
    if (this.stopped || !this.leadership.decidesHere) return;
    await Promise.all(this.breakers.names().flatMap((name) => (this.intervalOf(name) === null ? [] : [this.run(name, true)])));
  }

  /** How often the provider is checked in its current state; null: not at all. */
  private intervalOf(name: string): number | null {
    const { state } = this.breakers.get(name).status();
    if (state !== 'CLOSED') return this.config.breaker.healthIntervalMs;
    const closed = this.config.breaker.closedCheckIntervalMs;
    return closed > 0 && !this.registry.keepsSessions(name) ? closed : null;
  }

  /** Sets the provider's timer for its next check, or cancels it (not leading, not checked in this state). */
  private arm(name: string): void {
    const cadence = this.cadence.get(name);
    if (!cadence) return;
    cadence.timer?.unsubscribe();
    cadence.timer = null;
    const interval = this.intervalOf(name);
    if (this.stopped || cadence.inFlight || interval === null || !this.leadership.decidesHere) return;
    const due = Math.max((cadence.checkedAt ?? -Infinity) + interval, cadence.enteredAt + interval, cadence.notBefore);
    cadence.timer = this.scheduler.schedule(() => void this.run(name, false), Math.max(0, due - this.scheduler.now()));
  }

  private run(name: string, onDemand: boolean): Promise<void> {
    const cadence = this.cadence.get(name)!;
    cadence.inFlight ??= this.checkOnce(name, cadence, onDemand).finally(() => {
      cadence.inFlight = null;
      this.arm(name);
    });
    return cadence.inFlight;
  }

  private async checkOnce(name: string, cadence: Cadence, onDemand: boolean): Promise<void> {
    const interval = this.intervalOf(name);
    if (this.stopped || interval === null || !this.leadership.decidesHere) return;
    const fence = this.leadership.current.fence;
    try {
      // The cluster's cadence: a check on demand needs no gap, a scheduled one a whole interval.
      const claim = fence
        ? await this.repository.claimHealthCheck(name, fence, onDemand ? 0 : interval)
        : await this.claimAlone(name, onDemand ? 0 : interval, interval);
      if (!claim.claimed) {
        if (claim.dueInMs !== null) cadence.notBefore = this.scheduler.now() + claim.dueInMs;
        return;
      }
      cadence.checkedAt = this.scheduler.now();
      const result = await this.registry.healthCheck(name);
      if (!result.ok) this.logger.debug(`health check of ${name} failed: ${result.failure.reason}`);
      if (fence) this.store.recordSnapshot(name, this.breakers.get(name).toJSON(), fence);
    } catch (error) {
      // A claim that fails (the database, gone) is tried again an interval later, by then perhaps alone.
      cadence.checkedAt = this.scheduler.now();
      this.logger.warn(`health check of ${name} not made: ${(error as Error).message}`);
    }
  }

  /**
   * A replica deciding alone (its lease claim failed or came late) still asks the database for the gap since
   * the cluster's last check, so a lease answer that was merely slow on a loaded machine does not put its
   * check inside the leader's interval. Only a replica cut off for a whole interval checks without the
   * database's answer (it failed, or none came within an interval): a lease claim that came late, or a
   * connection that failed once, makes a replica decide alone for less than that, while the leader goes on.
   */
  private async claimAlone(name: string, minGapMs: number, interval: number): Promise<HealthCheckClaim> {
    let timeout: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.repository.claimHealthCheck(name, null, minGapMs),
        new Promise<never>((_, reject) => {
          timeout = setTimeout(() => reject(new Error('no answer')), Math.max(1, interval));
        }),
      ]);
    } catch {
      const alone = this.aloneSince === null ? 0 : this.scheduler.now() - this.aloneSince;
      return alone >= interval ? { claimed: true } : { claimed: false, dueInMs: interval - alone };
    } finally {
      clearTimeout(timeout);
    }
  }
}
