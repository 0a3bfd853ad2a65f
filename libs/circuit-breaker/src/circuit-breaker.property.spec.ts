/**
 * The breaker against a reference model over random policies, outcome sequences and clocks (fast-check).
 * The model is written for obviousness, not speed: it keeps every outcome since the state was entered in an
 * array and recomputes each rule from scratch; its sliding window is the literal (now − windowMs, now] when
 * there is one bucket per ms, and the bucket formula otherwise. Both run in the same virtual time: before an
 * event at time t, the timers due by t have run. Random `follow`/`lead` events check that a following breaker
 * counts like a deciding one and, on `lead()`, makes the transition the model makes from the same counts.
 */
import fc from 'fast-check';
import type { Subscription } from 'rxjs';
import {
  CircuitBreaker,
  windowBuckets,
  type Admission,
  type BreakerPolicy,
  type BreakerSnapshot,
  type BreakerState,
  type BreakerStatus,
  type BreakerTransition,
  type Outcome,
  type TripRule,
} from './index';
import { SteppedClock } from './testing/stepped-clock';

type Event = { readonly dt: number } & (
  | { readonly op: 'admit' }
  | { readonly op: 'record'; readonly outcome: Outcome }
  | { readonly op: 'restart' }
  | { readonly op: 'follow' }
  | { readonly op: 'lead' }
);
type ModelStatus = Omit<BreakerStatus, 'reason'>;
type ModelTransition = Omit<BreakerTransition, 'reason'>;

/** A small seeded PRNG, so the breaker and the model draw the same jitter. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Call {
  readonly at: number;
  readonly failed: boolean;
  readonly reason: string | null;
}

class ReferenceBreaker {
  state: BreakerState = 'CLOSED';
  since: number;
  openedAt: number | null = null;
  retryAt: number | null = null;
  lastError: string | null = null;
  opens = 0;
  calls: Call[] = [];
  health: boolean[] = [];
  probeOutcomes: boolean[] = [];
  trafficProbes = 0;
  admissions = 0;
  following = false;
  /** While following in HALF_OPEN: the first failure's reason (it re-opens on lead), and whether a probe call succeeded. */
  owedReopen: string | null = null;
  owedClose = false;
  trialOut = false;
  gateDue: number | null = null;
  readonly transitions: ModelTransition[] = [];

  constructor(
    readonly policy: BreakerPolicy,
    readonly random: () => number,
    public now: number,
  ) {
    this.since = now;
  }

  advanceTo(t: number): void {
    // A following breaker's timers run and do nothing; what fell due is decided on `lead()`.
    for (;;) {
      if (this.following) break;
      if (this.state === 'OPEN' && this.retryAt !== null && this.retryAt <= t) {
        this.now = this.retryAt;
        this.enter('HALF_OPEN');
      } else if (this.state === 'HALF_OPEN' && this.gateDue !== null && this.gateDue <= t) {
        this.now = this.gateDue;
        this.gateDue = null;
        this.checkGate();
      } else {
        break;
      }
    }
    this.now = t;
  }

  admit(): Admission {
    if (this.state === 'CLOSED') return { admitted: true, probe: false };
    if (this.state === 'OPEN') {
      if (this.retryAt === null || this.following || this.now < this.retryAt) return { admitted: false, probe: false };
      this.enter('HALF_OPEN');
    }
    if (this.policy.halfOpen.kind === 'single-trial') {
      if (this.trialOut) return { admitted: false, probe: false };
      this.trialOut = true;
      return { admitted: true, probe: true };
    }
    this.admissions += 1;
    const probe = this.admissions % Math.round(1 / this.policy.halfOpen.share) === 0;
    return { admitted: probe, probe };
  }

  record(outcome: Outcome): void {
    switch (outcome.kind) {
      case 'success':
      case 'failure': {
        const failed = outcome.kind === 'failure';
        if (this.state === 'CLOSED') {
          this.closedCall(failed, failed ? outcome.reason : null);
        } else if (this.state === 'HALF_OPEN' && outcome.probe !== false) {
          this.trialOut = false;
          if (outcome.kind === 'failure') {
            this.reopen(outcome.reason);
          } else {
            const slow =
              outcome.durationMs !== undefined && this.policy.slowCallMs !== undefined && outcome.durationMs > this.policy.slowCallMs;
            this.probe(!slow, true);
          }
        }
        return;
      }
      case 'health-pass':
        if (this.state === 'CLOSED') return;
        this.health.push(true);
        if (this.state === 'HALF_OPEN') this.probe(true, false);
        else if (!this.following && this.passesReached()) this.enter('HALF_OPEN');
        return;
      case 'health-fail':
        if (this.state === 'CLOSED') {
          if (this.policy.healthFailuresTrip === true) this.closedCall(true, outcome.reason);
          return;
        }
        this.health.push(false);
        if (this.state === 'HALF_OPEN') this.reopen(outcome.reason);
        return;
    }
  }

  follow(): void {
    this.following = true;
  }

  lead(): void {
    if (!this.following) return;
    this.following = false;
    if (this.state === 'CLOSED') {
      this.tripIfARuleHolds();
    } else if (this.state === 'OPEN') {
      if (this.policy.recovery.kind === 'health-checks' ? this.passesReached() : this.retryAt !== null && this.retryAt <= this.now) {
        this.enter('HALF_OPEN');
      }
    } else if (this.owedReopen !== null) {
      this.lastError = this.owedReopen;
      this.enter('OPEN');
    } else if (this.owedClose) {
      this.enter('CLOSED');
    } else {
      if (this.gateDue !== null && this.gateDue <= this.now) this.gateDue = null;
      this.checkGate();
    }
  }

  private closedCall(failed: boolean, reason: string | null): void {
    this.calls.push({ at: this.now, failed, reason });
    if (!this.following) this.tripIfARuleHolds();
  }

  private tripIfARuleHolds(): void {
    if (!this.tripRuleHolds()) return;
    this.lastError = [...this.calls].reverse().find((c) => c.failed)!.reason;
    this.enter('OPEN');
  }

  private passesReached(): boolean {
    return this.policy.recovery.kind === 'health-checks' && this.trailing(this.health, true) >= this.policy.recovery.passes;
  }

  private reopen(reason: string): void {
    if (this.following) {
      this.owedReopen ??= reason;
      return;
    }
    this.lastError = reason;
    this.enter('OPEN');
  }

  status(): ModelStatus {
    const window = this.policy.trip.find((r) => r.kind === 'window-error-rate');
    const inWindow = window === undefined ? [] : this.inWindow(window);
    const windowFailures = inWindow.filter((c) => c.failed).length;
    return {
      state: this.state,
      since: this.since,
      openedAt: this.openedAt,
      retryAt: this.retryAt,
      lastError: this.lastError,
      consecutiveFailures: this.trailing(
        this.calls.map((c) => c.failed),
        true,
      ),
      windowCalls: inWindow.length,
      windowFailures,
      windowErrorRate: inWindow.length > 0 ? windowFailures / inWindow.length : 0,
      attempts: this.calls.length,
      failures: this.calls.filter((c) => c.failed).length,
      healthPasses: this.trailing(this.health, true),
      probes: this.probeOutcomes.length,
      probeSuccesses: this.probeOutcomes.filter(Boolean).length,
      trafficProbes: this.trafficProbes,
      opens: this.opens,
    };
  }

  private tripRuleHolds(): boolean {
    return this.policy.trip.some((rule: TripRule) => {
      switch (rule.kind) {
        case 'consecutive-failures':
          return (
            this.trailing(
              this.calls.map((c) => c.failed),
              true,
            ) >= rule.failures
          );
        case 'window-error-rate': {
          const calls = this.inWindow(rule);
          return calls.length >= rule.minCalls && calls.filter((c) => c.failed).length / calls.length > rule.errorRate;
        }
        case 'failure-ratio':
          return this.calls.length > rule.minAttempts && this.calls.filter((c) => c.failed).length / this.calls.length >= rule.ratio;
      }
    });
  }

  private inWindow(rule: TripRule & { kind: 'window-error-rate' }): Call[] {
    const buckets = windowBuckets(rule);
    if (buckets === rule.windowMs) return this.calls.filter((c) => c.at > this.now - rule.windowMs);
    const bucket = (t: number): number => Math.floor((t * buckets) / rule.windowMs);
    return this.calls.filter((c) => bucket(c.at) > bucket(this.now) - buckets);
  }

  /** A probe outcome: a call's (`traffic`) or a health check's; only calls count towards closing. */
  private probe(success: boolean, traffic: boolean): void {
    this.probeOutcomes.push(success);
    if (traffic) this.trafficProbes += 1;
    if (this.policy.close.kind === 'first-success') {
      if (!(success && traffic)) return;
      if (this.following) this.owedClose = true;
      else this.enter('CLOSED');
    } else if (!this.following) {
      this.checkGate();
    }
  }

  private checkGate(): void {
    const close = this.policy.close;
    if (this.state !== 'HALF_OPEN' || close.kind !== 'success-rate') return;
    const n = this.probeOutcomes.length;
    if (
      this.now - this.since >= close.durationMs &&
      this.trafficProbes >= close.minProbes &&
      this.probeOutcomes.filter(Boolean).length / n > close.rate
    ) {
      this.enter('CLOSED');
    }
  }

  private enter(to: BreakerState): void {
    this.transitions.push({ from: this.state, to, at: this.now, lastError: this.lastError });
    this.state = to;
    this.since = this.now;
    this.calls = [];
    this.health = [];
    this.probeOutcomes = [];
    this.trafficProbes = 0;
    this.owedReopen = null;
    this.owedClose = false;
    this.admissions = 0;
    this.trialOut = false;
    this.gateDue = null;
    this.openedAt = null;
    this.retryAt = null;
    if (to === 'OPEN') {
      this.openedAt = this.now;
      this.opens += 1;
      const r = this.policy.recovery;
      if (r.kind === 'cool-off') this.retryAt = this.now + r.ms;
      if (r.kind === 'backoff') {
        const grown = this.policy.onHalfOpenFailure === 'reopen-grow' ? this.opens - 1 : 0;
        const base = Math.min(r.initialMs * r.factor ** grown, r.maxMs);
        this.retryAt = this.now + Math.round(base * (1 + r.jitter * (2 * this.random() - 1)));
      }
    } else if (to === 'HALF_OPEN') {
      if (this.policy.close.kind === 'success-rate') this.gateDue = this.now + this.policy.close.durationMs;
    } else {
      this.opens = 0;
    }
  }

  /** How many of the last entries equal `value`. */
  private trailing(values: readonly boolean[], value: boolean): number {
    let n = 0;
    for (let i = values.length - 1; i >= 0 && values[i] === value; i--) n++;
    return n;
  }
}

const tripRule: fc.Arbitrary<TripRule> = fc.oneof(
  fc.record({ kind: fc.constant('consecutive-failures' as const), failures: fc.integer({ min: 1, max: 5 }) }),
  fc.integer({ min: 1, max: 80 }).chain((windowMs) =>
    fc.record({
      kind: fc.constant('window-error-rate' as const),
      windowMs: fc.constant(windowMs),
      errorRate: fc.constantFrom(0, 0.1, 0.25, 0.5),
      minCalls: fc.integer({ min: 1, max: 6 }),
      buckets: fc.option(fc.integer({ min: 1, max: windowMs }), { nil: undefined }),
    }),
  ),
  fc.record({
    kind: fc.constant('failure-ratio' as const),
    minAttempts: fc.integer({ min: 0, max: 6 }),
    ratio: fc.constantFrom(0.2, 0.5, 1),
  }),
);

const policyArb: fc.Arbitrary<BreakerPolicy> = fc.record({
  trip: fc.array(tripRule, { maxLength: 3 }),
  recovery: fc.oneof(
    fc.record({ kind: fc.constant('cool-off' as const), ms: fc.integer({ min: 0, max: 40 }) }),
    fc.integer({ min: 0, max: 20 }).chain((initialMs) =>
      fc.record({
        kind: fc.constant('backoff' as const),
        initialMs: fc.constant(initialMs),
        factor: fc.constantFrom(1, 1.5, 2),
        maxMs: fc.integer({ min: initialMs, max: initialMs + 50 }),
        jitter: fc.constantFrom(0, 0.2, 0.5),
      }),
    ),
    fc.record({ kind: fc.constant('health-checks' as const), passes: fc.integer({ min: 1, max: 4 }) }),
  ),
  halfOpen: fc.oneof(
    fc.constant({ kind: 'single-trial' as const }),
    fc.record({ kind: fc.constant('share' as const), share: fc.constantFrom(1, 0.5, 0.25, 0.1) }),
  ),
  close: fc.oneof(
    fc.constant({ kind: 'first-success' as const }),
    fc.record({
      kind: fc.constant('success-rate' as const),
      rate: fc.constantFrom(0, 0.5, 0.8, 0.95),
      durationMs: fc.integer({ min: 0, max: 60 }),
      minProbes: fc.integer({ min: 0, max: 5 }),
    }),
  ),
  onHalfOpenFailure: fc.constantFrom('reopen' as const, 'reopen-grow' as const),
  healthFailuresTrip: fc.option(fc.boolean(), { nil: undefined }),
  slowCallMs: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
});

const probeFlag = fc.option(fc.boolean(), { nil: undefined });
const outcomeArb: fc.Arbitrary<Outcome> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('success' as const),
      durationMs: fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }),
      probe: probeFlag,
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('failure' as const),
      reason: fc.constantFrom('HTTP 503', 'timeout', 'ECONNRESET'),
      probe: probeFlag,
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'health-pass' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('health-fail' as const), reason: fc.constantFrom('health 500', 'health timeout') }),
  },
);
/** Events, with `follow` and `lead` as often as the weight says (each half of it). */
const eventsWith = (followLeadWeight: number): fc.Arbitrary<Event> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ dt: fc.nat(12), op: fc.constant('admit' as const) }) },
    { weight: 6, arbitrary: fc.record({ dt: fc.nat(12), op: fc.constant('record' as const), outcome: outcomeArb }) },
    { weight: 1, arbitrary: fc.record({ dt: fc.nat(12), op: fc.constant('restart' as const) }) },
    { weight: followLeadWeight, arbitrary: fc.record({ dt: fc.nat(12), op: fc.constantFrom('follow' as const, 'lead' as const) }) },
  );

const withoutReason = ({ reason: _reason, ...rest }: BreakerStatus): ModelStatus => rest;

describe('CircuitBreaker against the reference model', () => {
  it.each([
    ['', 1, 1],
    [', long stretches following and leading', 3, 30],
  ])('agrees on every admission, status and transition over random policies, outcomes and clocks%s', (_what, followLead, minEvents) => {
    fc.assert(
      fc.property(
        policyArb,
        fc.array(eventsWith(followLead), { minLength: minEvents, maxLength: 150 }),
        fc.nat(1_000_000),
        fc.integer(),
        (policy, events, start, seed) => {
          const clock = new SteppedClock();
          clock.advanceTo(start);
          const random = mulberry32(seed);
          const model = new ReferenceBreaker(policy, mulberry32(seed), start);
          const transitions: ModelTransition[] = [];
          const watch = (b: CircuitBreaker): Subscription => b.transitions$.subscribe(({ reason: _reason, ...t }) => transitions.push(t));
          let breaker = new CircuitBreaker(policy, { scheduler: clock, random });
          watch(breaker);

          for (const event of events) {
            const at = clock.now() + event.dt;
            clock.advanceTo(at);
            model.advanceTo(at);
            if (event.op === 'admit') {
              expect(breaker.admit()).toEqual(model.admit());
            } else if (event.op === 'record') {
              breaker.record(event.outcome);
              model.record(event.outcome);
            } else if (event.op === 'follow') {
              breaker.follow();
              model.follow();
            } else if (event.op === 'lead') {
              breaker.lead();
              model.lead();
            } else {
              // What a following copy owes is not in its snapshot: the copy that decides persists.
              const snapshot = JSON.parse(JSON.stringify(breaker.toJSON())) as BreakerSnapshot;
              breaker.dispose();
              breaker = CircuitBreaker.fromJSON(policy, snapshot, { scheduler: clock, random, following: model.following });
              watch(breaker);
              model.trialOut = false;
              model.owedReopen = null;
              model.owedClose = false;
            }
            expect(withoutReason(breaker.status())).toEqual(model.status());
          }
          expect(transitions).toEqual(model.transitions);
          breaker.dispose();
        },
      ),
      { numRuns: 600 },
    );
  });

  it('keeps every backoff wait within ±jitter of the capped, grown timeout', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom(0, 0.2, 0.5),
        (r, opens, jitter) => {
          const clock = new SteppedClock();
          const policy: BreakerPolicy = {
            trip: [{ kind: 'consecutive-failures', failures: 1 }],
            recovery: { kind: 'backoff', initialMs: 60_000, factor: 2, maxMs: 600_000, jitter },
            halfOpen: { kind: 'single-trial' },
            close: { kind: 'first-success' },
            onHalfOpenFailure: 'reopen-grow',
          };
          const breaker = new CircuitBreaker(policy, { scheduler: clock, random: () => r });
          breaker.record({ kind: 'failure', reason: 'down' });
          for (let i = 1; i < opens; i++) {
            clock.advanceTo(breaker.status().retryAt!);
            breaker.record({ kind: 'failure', reason: 'still down', probe: true });
          }
          const { retryAt, openedAt } = breaker.status();
          const base = Math.min(60_000 * 2 ** (opens - 1), 600_000);
          const wait = retryAt! - openedAt!;
          expect(wait).toBeGreaterThanOrEqual(Math.floor(base * (1 - jitter)));
          expect(wait).toBeLessThanOrEqual(Math.ceil(base * (1 + jitter)));
        },
      ),
    );
  });
});
