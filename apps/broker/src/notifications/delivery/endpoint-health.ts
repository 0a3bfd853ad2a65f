/**
 * Whether an endpoint may be sent to now, from two breakers of @app/circuit-breaker that see the same
 * outcomes (their policies: endpoint-policies.ts):
 *
 * - the "endpoint down" rule (`endpointDownPolicy`, docs/webhooks.md#delivery-rules): 3 failures in a row and the
 *   endpoint gets a single attempt every 5 minutes until a 2xx;
 * - the per-callback-URL breaker (`callbackUrlPolicy`, docs/design.md#other-breakers-in-the-library): 5 failures in a row open it
 *   for 1 minute (±20 %), then a single trial; each failed trial doubles the wait up to 10 minutes, but never
 *   past the down rule's 5 minutes: the breaker may shorten a down endpoint's wait, never lengthen it (beyond
 *   its own ±20 % on the capped 5 minutes).
 *
 * An attempt goes only when both admit it. While either is not CLOSED, one attempt at a time is made (the
 * trial); while either is OPEN before its retry time the endpoint is blocked until the later of the two.
 * Any 2xx ends both at once ("as soon as it responds 2xx, it leaves the down state"), even one answering an
 * attempt that started before the failure that took the endpoint down: the breakers themselves ignore an
 * outcome that is not their trial's, so such a 2xx starts them afresh, CLOSED.
 * Deliveries that meet a blocked endpoint are postponed, never dropped: only the 72 h lifetime ends them.
 */
import { CircuitBreaker, type Admission, type BreakerPolicy, type BreakerSnapshot, type BreakerStatus } from '@app/circuit-breaker';
import type { Clock } from '@app/clock';
import { Subscription, type SchedulerLike } from 'rxjs';
import { callbackUrlPolicy, endpointDownPolicy } from './endpoint-policies';

export interface EndpointHealthSettings {
  readonly downAfterFailures: number;
  readonly downRetryIntervalMs: number;
  readonly breakerFailures: number;
  readonly breakerResetMs: number;
  readonly breakerMaxResetMs: number;
}

interface EndpointSnapshots {
  readonly down: BreakerSnapshot | null;
  readonly url: BreakerSnapshot | null;
}

/** What the endpoint allows now. */
export type Gate =
  | { readonly kind: 'send'; readonly admission: EndpointAdmission }
  /** A trial is in flight: wait for its outcome. */
  | { readonly kind: 'wait' }
  /** Nothing may go before `until` (epoch ms). */
  | { readonly kind: 'blocked'; readonly until: number };

export interface EndpointAdmission {
  readonly down: Admission;
  readonly url: Admission;
}

type EndpointOutcome = { readonly ok: true; readonly durationMs: number } | { readonly ok: false; readonly reason: string };

type EndpointCondition = 'healthy' | 'down' | 'breaker-open' | 'trial';

export function endpointPolicies(settings: EndpointHealthSettings): { down: BreakerPolicy; url: BreakerPolicy } {
  return {
    down: endpointDownPolicy({ failuresInARow: settings.downAfterFailures, attemptEveryMs: settings.downRetryIntervalMs }),
    // A down endpoint gets one attempt every downRetryIntervalMs (docs/webhooks.md#delivery-rules): the breaker's waits
    // may be shorter (hidden under it), never longer, so its grown reset is capped there (plus its jitter).
    url: callbackUrlPolicy({
      maxFailures: settings.breakerFailures,
      resetTimeoutMs: Math.min(settings.breakerResetMs, settings.downRetryIntervalMs),
      maxResetTimeoutMs: Math.min(settings.breakerMaxResetMs, settings.downRetryIntervalMs),
    }),
  };
}

export class EndpointHealth {
  private down: CircuitBreaker;
  private url: CircuitBreaker;
  private readonly options: { scheduler: SchedulerLike; random: () => number };

  constructor(
    private readonly policies: { down: BreakerPolicy; url: BreakerPolicy },
    snapshots: EndpointSnapshots,
    private readonly clock: Clock,
    random: () => number = Math.random,
  ) {
    this.options = { scheduler: clockScheduler(clock), random };
    this.down = new CircuitBreaker(policies.down, { ...this.options, ...(snapshots.down ? { snapshot: snapshots.down } : {}) });
    this.url = new CircuitBreaker(policies.url, { ...this.options, ...(snapshots.url ? { snapshot: snapshots.url } : {}) });
  }

  /** Until when nothing may be sent (epoch ms), or null when something may. */
  blockedUntil(): number | null {
    const now = this.clock.now();
    const until = [this.down.status(), this.url.status()]
      .filter((s) => s.state === 'OPEN')
      .map((s) => s.retryAt ?? Infinity)
      .filter((retryAt) => retryAt > now);
    return until.length === 0 ? null : Math.max(...until);
  }

  /** True while either breaker is not CLOSED: one attempt at a time. */
  inTrial(): boolean {
    return this.down.status().state !== 'CLOSED' || this.url.status().state !== 'CLOSED';
  }

  /** Admits one attempt if the endpoint allows it, given how many of its attempts are in flight. */
  gate(inFlight: number): Gate {
    const until = this.blockedUntil();
    if (until !== null) return { kind: 'blocked', until };
    if (this.inTrial() && inFlight > 0) return { kind: 'wait' };
    // Neither refuses now (CLOSED, or OPEN past its retry time, or HALF_OPEN with no trial out), so admitting
    // both never leaves one holding a trial for an attempt that is not made.
    const down = this.down.admit();
    const url = this.url.admit();
    // Unreachable while every admitted attempt records its outcome; a lane that meets it ends, and the
    // next one starts from the stored snapshots, which carry no trial.
    if (!down.admitted || !url.admitted) return { kind: 'wait' };
    return { kind: 'send', admission: { down, url } };
  }

  /** Records an attempt's outcome on both breakers; true when it brought the endpoint back to normal. */
  record(admission: EndpointAdmission, outcome: EndpointOutcome): boolean {
    const before = this.inTrial();
    if (outcome.ok) {
      this.down.record({ kind: 'success', durationMs: outcome.durationMs, probe: admission.down.probe });
      this.url.record({ kind: 'success', durationMs: outcome.durationMs, probe: admission.url.probe });
      // A 2xx that was not the trial (its attempt started before the endpoint went down) left them as they were.
      if (this.down.status().state !== 'CLOSED') this.down = this.restart(this.down, this.policies.down);
      if (this.url.status().state !== 'CLOSED') this.url = this.restart(this.url, this.policies.url);
    } else {
      this.down.record({ kind: 'failure', reason: outcome.reason, probe: admission.down.probe });
      this.url.record({ kind: 'failure', reason: outcome.reason, probe: admission.url.probe });
    }
    return before && !this.inTrial();
  }

  condition(): EndpointCondition {
    const down = this.down.status();
    const url = this.url.status();
    if (url.state === 'OPEN') return 'breaker-open';
    if (down.state === 'OPEN') return 'down';
    if (down.state === 'HALF_OPEN' || url.state === 'HALF_OPEN') return 'trial';
    return 'healthy';
  }

  status(): { down: BreakerStatus; url: BreakerStatus } {
    return { down: this.down.status(), url: this.url.status() };
  }

  snapshots(): { down: BreakerSnapshot; url: BreakerSnapshot } {
    return { down: this.down.toJSON(), url: this.url.toJSON() };
  }

  dispose(): void {
    this.down.dispose();
    this.url.dispose();
  }

  /** A fresh CLOSED breaker in place of `breaker`: what entering CLOSED would leave (fresh counters, no growth). */
  private restart(breaker: CircuitBreaker, policy: BreakerPolicy): CircuitBreaker {
    breaker.dispose();
    return new CircuitBreaker(policy, this.options);
  }
}

/**
 * An RxJS scheduler that reads the clock and never fires. The endpoint breakers live only while their
 * endpoint is being worked on and are rebuilt from the database after, so their timed transitions are
 * evaluated when asked (`admit()` honours `retryAt` itself), never by a timer that could outlive the app.
 */
function clockScheduler(clock: Clock): SchedulerLike {
  return { now: () => clock.now(), schedule: () => new Subscription() };
}
