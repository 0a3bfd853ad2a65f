/**
 * The breaker: a small state machine (CLOSED → OPEN → HALF_OPEN → CLOSED) whose rules come from a
 * `BreakerPolicy`. Outcomes go in (`record`, or a stream through `connect`), states and transitions come
 * out (`state$`, `transitions$`), and `admit()` answers synchronously whether a new call may go through.
 *
 * All time comes from the injected RxJS scheduler (`now()` to stamp outcomes, `schedule()` for the
 * cool-off and the close gate) and all randomness from the injected `random`, so every rule runs under
 * `TestScheduler` in virtual time. The hot path (`admit`, `record`, `execute` while CLOSED) allocates
 * nothing but the promise `execute` returns and never scans a list: counters and a bucket ring.
 *
 * A breaker can follow (`follow()`): it counts every outcome as usual but makes no transition of its own,
 * because another copy of it decides (the cluster's leader); `lead()` lets it decide again, and it at once
 * makes the transition its counts call for. So a replica that takes over carries on from the cluster's live
 * counts rather than from the last decision it was told of.
 */
import { asyncScheduler, Observable, Subject, Subscription, type SchedulerLike } from 'rxjs';
import type { BreakerState, BreakerStatus, BreakerTransition } from './breaker-status';
import { BreakerRejectedError, BreakerTimeoutError, describeError } from './errors';
import type { Admission, Outcome } from './outcome';
import { validatePolicy, windowBuckets, type BreakerPolicy, type FailureRatioRule, type WindowErrorRateRule } from './policy';
import { SlidingWindow } from './sliding-window';
import { assertSnapshot, type BreakerSnapshot } from './snapshot';

export interface BreakerOptions {
  /** Source of time and timers; default `asyncScheduler`. Pass a `TestScheduler` to run in virtual time. */
  readonly scheduler?: SchedulerLike;
  /** Source of jitter, returning [0, 1); default `Math.random`. */
  readonly random?: () => number;
  /** Start from this state (see `toJSON`) instead of CLOSED. */
  readonly snapshot?: BreakerSnapshot;
  /** Start following (see `follow()`); default false: the breaker decides. */
  readonly following?: boolean;
}

interface WindowTrip {
  readonly rule: WindowErrorRateRule;
  readonly window: SlidingWindow;
}

const ADMITTED: Admission = Object.freeze({ admitted: true, probe: false });
const PROBE: Admission = Object.freeze({ admitted: true, probe: true });
const REFUSED: Admission = Object.freeze({ admitted: false, probe: false });

const percent = (x: number): string => `${+(x * 100).toFixed(2)} %`;

export class CircuitBreaker {
  /** A breaker that carries on from a snapshot taken with `toJSON`. */
  static fromJSON(policy: BreakerPolicy, snapshot: BreakerSnapshot, options: Omit<BreakerOptions, 'snapshot'> = {}): CircuitBreaker {
    return new CircuitBreaker(policy, { ...options, snapshot });
  }

  /** The current status on subscribe, then the status after every transition. */
  readonly state$: Observable<BreakerStatus>;
  /** Every transition, as it happens. */
  readonly transitions$: Observable<BreakerTransition>;

  private readonly scheduler: SchedulerLike;
  private readonly random: () => number;
  private readonly statusSubject = new Subject<BreakerStatus>();
  private readonly transitionSubject = new Subject<BreakerTransition>();
  private readonly connections = new Subscription();
  private timer: Subscription | null = null;
  private disposed = false;

  // The policy, compiled into what the hot path reads.
  private readonly consecutiveLimit: number;
  private readonly windows: readonly WindowTrip[];
  private readonly ratioRules: readonly FailureRatioRule[];
  private readonly tripsOnSuccess: boolean;
  private readonly slowCallMs: number;
  private readonly probeShare: number | null;

  private state: BreakerState = 'CLOSED';
  private since: number;
  private openedAt: number | null = null;
  private retryAt: number | null = null;
  private retryDelayMs: number | null = null;
  private lastError: string | null = null;
  private reason = 'initial';
  private opens = 0;
  private consecutiveFailures = 0;
  private attempts = 0;
  private failures = 0;
  private lastFailure: string | null = null;
  private healthPasses = 0;
  private probes = 0;
  private probeSuccesses = 0;
  private trafficProbes = 0;
  private halfOpenAdmissions = 0;
  private trialInFlight = false;
  private following: boolean;
  /** While following in HALF_OPEN: the first failure that would have re-opened the breaker, kept for `lead()`. */
  private owedReopen: { reason: string; error: string } | null = null;
  /** While following in HALF_OPEN with `first-success`: a probe call succeeded, so `lead()` closes. */
  private owedClose = false;

  // Bound once, so that `execute` while CLOSED allocates only the promise that `then` returns.
  private readonly settleClosedSuccess = <T>(value: T): T => {
    this.onCallSuccess(undefined, false);
    return value;
  };
  private readonly settleClosedFailure = (error: unknown): never => {
    this.onCallFailure(describeError(error), false);
    throw error;
  };

  constructor(
    readonly policy: BreakerPolicy,
    options: BreakerOptions = {},
  ) {
    const problems = validatePolicy(policy);
    if (problems.length > 0) throw new RangeError(`invalid breaker policy: ${problems.join('; ')}`);
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.random = options.random ?? Math.random;

    let consecutiveLimit = Infinity;
    const windows: WindowTrip[] = [];
    const ratioRules: FailureRatioRule[] = [];
    for (const rule of policy.trip) {
      if (rule.kind === 'consecutive-failures') consecutiveLimit = Math.min(consecutiveLimit, rule.failures);
      else if (rule.kind === 'window-error-rate') windows.push({ rule, window: new SlidingWindow(rule.windowMs, windowBuckets(rule)) });
      else ratioRules.push(rule);
    }
    this.consecutiveLimit = consecutiveLimit;
    this.windows = windows;
    this.ratioRules = ratioRules;
    this.tripsOnSuccess = windows.length > 0 || ratioRules.length > 0;
    this.slowCallMs = policy.slowCallMs ?? Infinity;
    this.following = options.following ?? false;
    this.probeShare = policy.halfOpen.kind === 'share' ? policy.halfOpen.share : null;

    this.since = this.scheduler.now();
    this.state$ = new Observable<BreakerStatus>((subscriber) => {
      subscriber.next(this.status());
      return this.statusSubject.subscribe(subscriber);
    });
    this.transitions$ = this.transitionSubject.asObservable();
    if (options.snapshot !== undefined) this.restore(options.snapshot);
  }

  /** May a new call go through now, and is it a probe? Synchronous and allocation-free. */
  admit(): Admission {
    if (this.state === 'CLOSED') return ADMITTED;
    if (this.state === 'OPEN') {
      // The scheduled cool-off may run late (a busy event loop); admission still honours the exact time.
      if (this.retryAt === null || this.disposed || this.following || this.scheduler.now() < this.retryAt) return REFUSED;
      this.toHalfOpen(this.retryReason());
    }
    if (this.probeShare === null) {
      if (this.trialInFlight) return REFUSED;
      this.trialInFlight = true;
      return PROBE;
    }
    const n = ++this.halfOpenAdmissions;
    // Deterministic share: admission n is a probe when n × share crosses an integer (share 0.1: the 10th, 20th, …).
    return Math.floor(n * this.probeShare + 1e-9) > Math.floor((n - 1) * this.probeShare + 1e-9) ? PROBE : REFUSED;
  }

  /** Tells the breaker what happened; stamped with `scheduler.now()`. */
  record(outcome: Outcome): void {
    switch (outcome.kind) {
      case 'success':
        this.onCallSuccess(outcome.durationMs, outcome.probe);
        return;
      case 'failure':
        this.onCallFailure(outcome.reason, outcome.probe);
        return;
      case 'health-pass':
        this.onHealthPass();
        return;
      case 'health-fail':
        this.onHealthFail(outcome.reason);
        return;
    }
  }

  /** Records every outcome of the stream until it ends, the subscription is cancelled or the breaker is disposed. An error ends the connection. */
  connect(outcomes: Observable<Outcome>): Subscription {
    const subscription = outcomes.subscribe({ next: (outcome) => this.record(outcome), error: () => undefined });
    if (!subscription.closed) {
      this.connections.add(subscription);
      subscription.add(() => this.connections.remove(subscription));
    }
    return subscription;
  }

  /**
   * Guards an async call: admit, run, record. Rejects with `BreakerRejectedError` without calling `fn` when
   * not admitted, and with `BreakerTimeoutError` after the policy's `callTimeoutMs`. An error for which
   * `isFailure` returns false (say, a 4xx caused by the caller's input) is recorded as a success: the
   * guarded resource answered.
   */
  execute<T>(fn: () => PromiseLike<T>, isFailure?: (error: unknown) => boolean): Promise<T> {
    const admission = this.admit();
    if (!admission.admitted) return Promise.reject(new BreakerRejectedError(this.status()));
    const probe = admission.probe;
    const startedAt = probe ? this.scheduler.now() : 0;
    let pending: PromiseLike<T>;
    try {
      pending = fn();
    } catch (error) {
      if (isFailure === undefined || isFailure(error)) this.onCallFailure(describeError(error), probe);
      else this.onCallSuccess(probe ? this.scheduler.now() - startedAt : undefined, probe);
      return Promise.reject(error);
    }
    const timeoutMs = this.policy.callTimeoutMs;
    if (!probe && timeoutMs === undefined && isFailure === undefined) {
      return Promise.resolve(pending).then(this.settleClosedSuccess, this.settleClosedFailure);
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer =
        timeoutMs === undefined
          ? null
          : this.scheduler.schedule(() => {
              if (settled) return;
              settled = true;
              this.onCallFailure(`timeout after ${timeoutMs} ms`, probe);
              reject(new BreakerTimeoutError(timeoutMs));
            }, timeoutMs);
      const duration = (): number | undefined => (probe ? this.scheduler.now() - startedAt : undefined);
      Promise.resolve(pending).then(
        (value) => {
          if (settled) return;
          settled = true;
          timer?.unsubscribe();
          this.onCallSuccess(duration(), probe);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          timer?.unsubscribe();
          if (isFailure === undefined || isFailure(error)) this.onCallFailure(describeError(error), probe);
          else this.onCallSuccess(duration(), probe);
          reject(error);
        },
      );
    });
  }

  /** The breaker now. */
  status(): BreakerStatus {
    const window = this.windows.length > 0 ? this.windows[0].window : null;
    if (window !== null && this.state === 'CLOSED') window.advance(this.scheduler.now());
    const windowCalls = window === null ? 0 : window.callCount;
    const windowFailures = window === null ? 0 : window.failureCount;
    return {
      state: this.state,
      since: this.since,
      openedAt: this.openedAt,
      retryAt: this.retryAt,
      lastError: this.lastError,
      reason: this.reason,
      consecutiveFailures: this.consecutiveFailures,
      windowCalls,
      windowFailures,
      windowErrorRate: windowCalls > 0 ? windowFailures / windowCalls : 0,
      attempts: this.attempts,
      failures: this.failures,
      healthPasses: this.healthPasses,
      probes: this.probes,
      probeSuccesses: this.probeSuccesses,
      trafficProbes: this.trafficProbes,
      opens: this.opens,
    };
  }

  /** Plain, versioned JSON; `CircuitBreaker.fromJSON` (or the `snapshot` option) carries on from it. */
  toJSON(): BreakerSnapshot {
    return {
      version: 1,
      state: this.state,
      since: this.since,
      openedAt: this.openedAt,
      retryAt: this.retryAt,
      retryDelayMs: this.retryDelayMs,
      lastError: this.lastError,
      reason: this.reason,
      opens: this.opens,
      consecutiveFailures: this.consecutiveFailures,
      attempts: this.attempts,
      failures: this.failures,
      lastFailure: this.lastFailure,
      windows: this.windows.map(({ window }) => window.toJSON()),
      healthPasses: this.healthPasses,
      probes: this.probes,
      probeSuccesses: this.probeSuccesses,
      trafficProbes: this.trafficProbes,
      halfOpenAdmissions: this.halfOpenAdmissions,
    };
  }

  /**
   * Stops deciding: outcomes still feed every counter (the trip rules', the pass count, the probe counts), but
   * nothing moves the breaker, neither an outcome nor a timer, until `lead()`. For a copy of a breaker that
   * another one decides (adopt its decisions with `fromJSON`).
   */
  follow(): void {
    this.following = true;
  }

  /**
   * Decides again, and at once makes the transition its counts call for, as each rule reads them now: CLOSED
   * trips if a trip rule holds; OPEN half-opens once its passes are in (or its timed recovery is due);
   * HALF_OPEN re-opens if a probe or health check failed while it followed, else closes if its close rule
   * holds. A timer that fell due while it followed is honoured here; one still to come runs as usual.
   */
  lead(): void {
    if (!this.following || this.disposed) return;
    this.following = false;
    const now = this.scheduler.now();
    if (this.state === 'CLOSED') {
      for (let i = 0; i < this.windows.length; i++) this.windows[i].window.advance(now);
      this.checkTrip(true);
    } else if (this.state === 'OPEN') {
      const recovery = this.policy.recovery;
      if (recovery.kind === 'health-checks') {
        if (this.healthPasses >= recovery.passes) this.toHalfOpen(`${recovery.passes} consecutive health checks passed`);
      } else if (this.retryAt !== null && now >= this.retryAt) {
        this.toHalfOpen(this.retryReason());
      }
    } else if (this.owedReopen !== null) {
      this.toOpen(this.owedReopen.reason, this.owedReopen.error);
    } else if (this.owedClose) {
      this.toClosed('probe succeeded');
    } else {
      this.evaluateCloseGate();
    }
  }

  /** True between `follow()` and `lead()`. */
  get isFollowing(): boolean {
    return this.following;
  }

  /** Cancels scheduled work and connections, completes `state$` and `transitions$`; later outcomes are ignored. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.cancelTimer();
    this.connections.unsubscribe();
    this.transitionSubject.complete();
    this.statusSubject.complete();
  }

  private onCallSuccess(durationMs: number | undefined, probe: boolean | undefined): void {
    if (this.disposed) return;
    if (this.state === 'CLOSED') {
      this.consecutiveFailures = 0;
      this.attempts += 1;
      if (this.tripsOnSuccess) {
        if (this.windows.length > 0) this.addToWindows(false);
        this.checkTrip(false);
      }
    } else if (this.state === 'HALF_OPEN' && probe !== false) {
      this.trialInFlight = false;
      this.onProbe(durationMs === undefined || durationMs <= this.slowCallMs, true);
    }
  }

  private onCallFailure(reason: string, probe: boolean | undefined): void {
    if (this.disposed) return;
    if (this.state === 'CLOSED') {
      this.consecutiveFailures += 1;
      this.attempts += 1;
      this.failures += 1;
      this.lastFailure = reason;
      if (this.windows.length > 0) this.addToWindows(true);
      this.checkTrip(true);
    } else if (this.state === 'HALF_OPEN' && probe !== false) {
      this.trialInFlight = false;
      this.reopen(`probe failed: ${reason}`, reason);
    }
  }

  private onHealthPass(): void {
    if (this.disposed || this.state === 'CLOSED') return;
    this.healthPasses += 1;
    if (this.state === 'HALF_OPEN') {
      this.onProbe(true, false);
      return;
    }
    if (this.following) return;
    const recovery = this.policy.recovery;
    if (recovery.kind === 'health-checks' && this.healthPasses >= recovery.passes) {
      this.toHalfOpen(`${recovery.passes} consecutive health checks passed`);
    }
  }

  private onHealthFail(reason: string): void {
    if (this.disposed) return;
    if (this.state === 'CLOSED') {
      if (this.policy.healthFailuresTrip === true) this.onCallFailure(reason, false);
      return;
    }
    this.healthPasses = 0;
    if (this.state === 'HALF_OPEN') this.reopen(`health check failed: ${reason}`, reason);
  }

  /** HALF_OPEN → OPEN now, or, while following, once this breaker leads again. */
  private reopen(reason: string, error: string): void {
    if (this.following) this.owedReopen ??= { reason, error };
    else this.toOpen(reason, error);
  }

  private addToWindows(failed: boolean): void {
    const now = this.scheduler.now();
    for (let i = 0; i < this.windows.length; i++) this.windows[i].window.add(now, failed);
  }

  /** Any trip rule trips; a success can complete a window or ratio rule, only a failure the consecutive rule. */
  private checkTrip(afterFailure: boolean): void {
    if (this.following) return;
    if (afterFailure && this.consecutiveFailures >= this.consecutiveLimit) {
      this.toOpen(`${this.consecutiveFailures} consecutive failures`, this.lastFailure);
      return;
    }
    for (let i = 0; i < this.windows.length; i++) {
      const { rule, window } = this.windows[i];
      const calls = window.callCount;
      const failures = window.failureCount;
      if (calls >= rule.minCalls && failures / calls > rule.errorRate) {
        this.toOpen(
          `error rate ${failures}/${calls} (${percent(failures / calls)}) > ${percent(rule.errorRate)} over ${rule.windowMs} ms`,
          this.lastFailure,
        );
        return;
      }
    }
    for (let i = 0; i < this.ratioRules.length; i++) {
      const rule = this.ratioRules[i];
      if (this.attempts > rule.minAttempts && this.failures / this.attempts >= rule.ratio) {
        this.toOpen(
          `failure ratio ${this.failures}/${this.attempts} ≥ ${rule.ratio} after more than ${rule.minAttempts} attempts`,
          this.lastFailure,
        );
        return;
      }
    }
  }

  /**
   * One probe outcome in HALF_OPEN: a call's (`traffic`) or a health check's. Both count towards the success
   * rate, but health checks alone never close: the close rules need outcomes of calls.
   */
  private onProbe(success: boolean, traffic: boolean): void {
    this.probes += 1;
    if (success) this.probeSuccesses += 1;
    if (traffic) this.trafficProbes += 1;
    if (this.policy.close.kind === 'first-success') {
      if (!(success && traffic)) return;
      if (this.following) this.owedClose = true;
      else this.toClosed('probe succeeded');
    } else {
      this.evaluateCloseGate();
    }
  }

  /**
   * The success-rate gate, evaluated on every probe outcome and once when its duration has elapsed: the rate
   * over every probe (calls and health checks), the minimum over the probe calls.
   */
  private evaluateCloseGate(): void {
    const close = this.policy.close;
    if (this.following || this.state !== 'HALF_OPEN' || close.kind !== 'success-rate') return;
    const elapsed = this.scheduler.now() - this.since;
    if (elapsed >= close.durationMs && this.trafficProbes >= close.minProbes && this.probeSuccesses / this.probes > close.rate) {
      this.toClosed(
        `probe success ${this.probeSuccesses}/${this.probes} (${percent(this.probeSuccesses / this.probes)}) > ${percent(close.rate)} over ${elapsed} ms`,
      );
    }
  }

  private retryReason(): string {
    return `${this.policy.recovery.kind === 'backoff' ? 'reset timeout' : 'cool-off'} of ${this.retryDelayMs} ms elapsed`;
  }

  /** The time OPEN waits before letting a trial through, or null when recovery waits for health checks. */
  private nextRetryDelay(): number | null {
    const recovery = this.policy.recovery;
    switch (recovery.kind) {
      case 'health-checks':
        return null;
      case 'cool-off':
        return recovery.ms;
      case 'backoff': {
        const steps = this.policy.onHalfOpenFailure === 'reopen-grow' ? Math.max(0, this.opens - 1) : 0;
        const base = Math.min(recovery.initialMs * Math.pow(recovery.factor, steps), recovery.maxMs);
        return Math.round(base * (1 + recovery.jitter * (2 * this.random() - 1)));
      }
    }
  }

  private toOpen(reason: string, error: string | null): void {
    const from = this.state;
    const now = this.scheduler.now();
    this.resetCounters();
    this.state = 'OPEN';
    this.since = now;
    this.openedAt = now;
    this.lastError = error;
    this.reason = reason;
    this.opens += 1;
    this.cancelTimer();
    this.retryDelayMs = this.nextRetryDelay();
    this.retryAt = this.retryDelayMs === null ? null : now + this.retryDelayMs;
    if (this.retryDelayMs !== null) this.armRetry(this.retryDelayMs);
    this.emit(from, now);
  }

  private toHalfOpen(reason: string): void {
    const from = this.state;
    const now = this.scheduler.now();
    this.resetCounters();
    this.state = 'HALF_OPEN';
    this.since = now;
    this.openedAt = null;
    this.retryAt = null;
    this.retryDelayMs = null;
    this.reason = reason;
    this.cancelTimer();
    if (this.policy.close.kind === 'success-rate') this.armCloseGate(this.policy.close.durationMs);
    this.emit(from, now);
  }

  private toClosed(reason: string): void {
    const from = this.state;
    const now = this.scheduler.now();
    this.resetCounters();
    this.state = 'CLOSED';
    this.since = now;
    this.openedAt = null;
    this.retryAt = null;
    this.retryDelayMs = null;
    this.reason = reason;
    this.opens = 0;
    this.cancelTimer();
    this.emit(from, now);
  }

  /** Each state starts with fresh counters. */
  private resetCounters(): void {
    this.consecutiveFailures = 0;
    this.attempts = 0;
    this.failures = 0;
    this.lastFailure = null;
    for (let i = 0; i < this.windows.length; i++) this.windows[i].window.reset();
    this.healthPasses = 0;
    this.probes = 0;
    this.probeSuccesses = 0;
    this.trafficProbes = 0;
    this.halfOpenAdmissions = 0;
    this.trialInFlight = false;
    this.owedReopen = null;
    this.owedClose = false;
  }

  private armRetry(delay: number): void {
    this.timer = this.scheduler.schedule(() => {
      this.timer = null;
      if (this.state === 'OPEN' && !this.following) this.toHalfOpen(this.retryReason());
    }, delay);
  }

  private armCloseGate(delay: number): void {
    this.timer = this.scheduler.schedule(() => {
      this.timer = null;
      this.evaluateCloseGate();
    }, delay);
  }

  private cancelTimer(): void {
    if (this.timer !== null) {
      this.timer.unsubscribe();
      this.timer = null;
    }
  }

  private emit(from: BreakerState, at: number): void {
    if (this.disposed) return;
    this.transitionSubject.next({ from, to: this.state, reason: this.reason, at, lastError: this.lastError });
    this.statusSubject.next(this.status());
  }

  /** Takes over a snapshot; timers are re-armed relative to the snapshot's times. */
  private restore(snapshot: BreakerSnapshot): void {
    assertSnapshot(snapshot);
    this.state = snapshot.state;
    this.since = snapshot.since;
    this.lastError = snapshot.lastError;
    this.reason = snapshot.reason;
    this.opens = snapshot.opens;
    this.consecutiveFailures = snapshot.consecutiveFailures;
    this.attempts = snapshot.attempts;
    this.failures = snapshot.failures;
    this.lastFailure = snapshot.lastFailure;
    this.healthPasses = snapshot.healthPasses;
    this.probes = snapshot.probes;
    this.probeSuccesses = snapshot.probeSuccesses;
    this.trafficProbes = snapshot.trafficProbes ?? 0;
    this.halfOpenAdmissions = snapshot.halfOpenAdmissions;
    this.trialInFlight = false;
    this.windows.forEach(({ window }, i) => window.restore(snapshot.windows[i]));
    const now = this.scheduler.now();
    if (this.state === 'OPEN') {
      const openedAt = snapshot.openedAt ?? snapshot.since;
      this.openedAt = openedAt;
      if (this.policy.recovery.kind === 'health-checks') {
        this.retryAt = null;
        this.retryDelayMs = null;
      } else {
        if (snapshot.retryAt !== null) {
          this.retryAt = snapshot.retryAt;
          this.retryDelayMs = snapshot.retryDelayMs ?? snapshot.retryAt - openedAt;
        } else {
          // The snapshot came from a policy without a timed recovery: start this policy's wait from the opening.
          this.retryDelayMs = this.nextRetryDelay() as number;
          this.retryAt = openedAt + this.retryDelayMs;
        }
        this.armRetry(Math.max(0, this.retryAt - now));
      }
    } else if (this.state === 'HALF_OPEN') {
      this.openedAt = null;
      this.retryAt = null;
      const close = this.policy.close;
      if (close.kind === 'success-rate') this.armCloseGate(Math.max(0, this.since + close.durationMs - now));
    } else {
      this.openedAt = null;
      this.retryAt = null;
      this.retryDelayMs = null;
    }
  }
}
