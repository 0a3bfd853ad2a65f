export type BreakerState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

/**
 * The breaker at one instant. Times are the scheduler's (`scheduler.now()`, epoch ms with the default
 * scheduler). Counters are those of the current state: each state starts with fresh counters.
 */
export interface BreakerStatus {
  readonly state: BreakerState;
  /** When the current state was entered. */
  readonly since: number;
  /** When the breaker opened; non-null only while OPEN. */
  readonly openedAt: number | null;
  /** While OPEN with a timed recovery: when the next call will be let through as a trial; else null. */
  readonly retryAt: number | null;
  /** The failure that most recently tripped the breaker; null if it never tripped. */
  readonly lastError: string | null;
  /** Why the last transition happened ('initial' before the first one). */
  readonly reason: string;
  /** CLOSED: failures in a row. */
  readonly consecutiveFailures: number;
  /** CLOSED: calls and failures in the sliding window of the first window rule, at this instant. */
  readonly windowCalls: number;
  readonly windowFailures: number;
  /** windowFailures / windowCalls, 0 when the window is empty. */
  readonly windowErrorRate: number;
  /** CLOSED: calls and failures since the breaker closed (the failure-ratio rule's counters). */
  readonly attempts: number;
  readonly failures: number;
  /** OPEN / HALF_OPEN: passing health checks in a row. */
  readonly healthPasses: number;
  /** HALF_OPEN: probe outcomes recorded (calls and health checks) and how many were fast successes. */
  readonly probes: number;
  readonly probeSuccesses: number;
  /** HALF_OPEN: how many of those probes were calls (real traffic, not health checks): the close rule's minimum counts these. */
  readonly trafficProbes: number;
  /** How many times the breaker opened since it last closed (drives the backoff). */
  readonly opens: number;
}

export interface BreakerTransition {
  readonly from: BreakerState;
  readonly to: BreakerState;
  readonly reason: string;
  readonly at: number;
  readonly lastError: string | null;
}
