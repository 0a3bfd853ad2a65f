/**
 * A breaker policy is plain data, composed from parts: when to trip (any trip rule), how to leave OPEN
 * (recovery), who gets through in HALF_OPEN (half-open admission), when HALF_OPEN closes (close rule) and
 * what a failure in HALF_OPEN does. Being data, a policy can come from configuration, be logged and be
 * compared; `validatePolicy` names every field that is out of range.
 */

/** CLOSED → OPEN on the Nth failure in a row (the Nth trips, N − 1 does not). */
export interface ConsecutiveFailuresRule {
  readonly kind: 'consecutive-failures';
  readonly failures: number;
}

/**
 * CLOSED → OPEN when, over the sliding window, failures / calls is strictly greater than `errorRate`
 * and the window holds at least `minCalls` calls. The window is kept in `buckets` time buckets
 * (default: min(windowMs, 120)), so memory is bounded by the bucket count, never by the call rate.
 */
export interface WindowErrorRateRule {
  readonly kind: 'window-error-rate';
  readonly windowMs: number;
  readonly errorRate: number;
  readonly minCalls: number;
  readonly buckets?: number;
}

/** CLOSED → OPEN when strictly more than `minAttempts` attempts were recorded since the last reset and failures / attempts ≥ `ratio`. */
export interface FailureRatioRule {
  readonly kind: 'failure-ratio';
  readonly minAttempts: number;
  readonly ratio: number;
}

export type TripRule = ConsecutiveFailuresRule | WindowErrorRateRule | FailureRatioRule;

/** OPEN → HALF_OPEN after a fixed time. */
export interface CoolOffRecovery {
  readonly kind: 'cool-off';
  readonly ms: number;
}

/**
 * OPEN → HALF_OPEN after a reset timeout of initialMs × factor^(opens − 1), capped at maxMs, then
 * spread by ±jitter (a fraction: 0.2 is ±20 %). The exponent grows only with `onHalfOpenFailure: 'reopen-grow'`.
 */
export interface BackoffRecovery {
  readonly kind: 'backoff';
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
  readonly jitter: number;
}

/** OPEN → HALF_OPEN after `passes` consecutive passing health checks; a failing check resets the count. */
export interface HealthChecksRecovery {
  readonly kind: 'health-checks';
  readonly passes: number;
}

export type RecoveryRule = CoolOffRecovery | BackoffRecovery | HealthChecksRecovery;

/** HALF_OPEN lets one trial call through at a time; the next is admitted once the trial's outcome is recorded. */
export interface SingleTrialAdmission {
  readonly kind: 'single-trial';
}

/** HALF_OPEN admits a deterministic share of calls as probes: share 0.1 admits exactly every 10th call. */
export interface ShareAdmission {
  readonly kind: 'share';
  readonly share: number;
}

export type HalfOpenAdmission = SingleTrialAdmission | ShareAdmission;

/** HALF_OPEN → CLOSED on the first successful probe call (a passing health check does not close). */
export interface FirstSuccessClose {
  readonly kind: 'first-success';
}

/**
 * HALF_OPEN → CLOSED once at least `durationMs` were spent in HALF_OPEN, at least `minProbes` probe calls were
 * recorded (health checks do not count towards it: they alone never close) and successes / probes, over
 * calls and health checks, is strictly greater than `rate`. Slow successes count as probes, not as successes.
 */
export interface SuccessRateClose {
  readonly kind: 'success-rate';
  readonly rate: number;
  readonly durationMs: number;
  readonly minProbes: number;
}

export type CloseRule = FirstSuccessClose | SuccessRateClose;

/** 'reopen': back to OPEN with the same reset timeout; 'reopen-grow': back to OPEN with the backoff grown by one step. */
export type HalfOpenFailure = 'reopen' | 'reopen-grow';

export interface BreakerPolicy {
  /** Any rule trips. An empty list never trips. */
  readonly trip: readonly TripRule[];
  readonly recovery: RecoveryRule;
  readonly halfOpen: HalfOpenAdmission;
  readonly close: CloseRule;
  readonly onHalfOpenFailure: HalfOpenFailure;
  /**
   * CLOSED: a failing health check counts as a failed call for the trip rules (a passing one counts for
   * nothing: it proves the check's endpoint, not the calls). For a resource whose calls cannot tell it is
   * gone (no traffic). Default false: health checks count only in OPEN and HALF_OPEN.
   */
  readonly healthFailuresTrip?: boolean;
  /** A success that took strictly longer than this is slow: in HALF_OPEN it neither counts as a success nor re-opens. */
  readonly slowCallMs?: number;
  /** Used by `CircuitBreaker.execute`: a call that has not settled after this long is recorded as a failure. */
  readonly callTimeoutMs?: number;
}

/** Default bucket count of a sliding window: 1 ms buckets up to 120 ms windows, 120 buckets beyond. */
export function windowBuckets(rule: WindowErrorRateRule): number {
  return rule.buckets ?? Math.min(rule.windowMs, 120);
}

const MAX_BUCKETS = 100_000;

/** Every problem with the policy, one message per field (empty when valid). */
export function validatePolicy(policy: BreakerPolicy): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, field: string, expected: string, value: unknown): void => {
    if (!ok) problems.push(`${field} must be ${expected} (got ${JSON.stringify(value)})`);
  };
  const isInt = (v: unknown, min: number): boolean => typeof v === 'number' && Number.isInteger(v) && v >= min;
  const isNum = (v: unknown, min: number, max = Infinity): boolean => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;

  if (!Array.isArray(policy.trip)) {
    problems.push('trip must be an array of trip rules');
  } else {
    policy.trip.forEach((rule: TripRule, i) => {
      const at = `trip[${i}]`;
      switch (rule.kind) {
        case 'consecutive-failures':
          check(isInt(rule.failures, 1), `${at}.failures`, 'an integer ≥ 1', rule.failures);
          break;
        case 'window-error-rate': {
          check(isInt(rule.windowMs, 1), `${at}.windowMs`, 'an integer ≥ 1', rule.windowMs);
          check(isNum(rule.errorRate, 0) && rule.errorRate < 1, `${at}.errorRate`, 'in [0, 1)', rule.errorRate);
          check(isInt(rule.minCalls, 1), `${at}.minCalls`, 'an integer ≥ 1', rule.minCalls);
          const buckets = windowBuckets(rule);
          check(
            isInt(buckets, 1) && buckets <= Math.min(rule.windowMs, MAX_BUCKETS),
            `${at}.buckets`,
            `an integer in [1, min(windowMs, ${MAX_BUCKETS})]`,
            rule.buckets,
          );
          break;
        }
        case 'failure-ratio':
          check(isInt(rule.minAttempts, 0), `${at}.minAttempts`, 'an integer ≥ 0', rule.minAttempts);
          check(isNum(rule.ratio, 0, 1) && rule.ratio > 0, `${at}.ratio`, 'in (0, 1]', rule.ratio);
          break;
        default:
          problems.push(`${at}.kind must be consecutive-failures, window-error-rate or failure-ratio`);
      }
    });
  }

  const recovery = policy.recovery;
  switch (recovery?.kind) {
    case 'cool-off':
      check(isNum(recovery.ms, 0), 'recovery.ms', 'a number ≥ 0', recovery.ms);
      break;
    case 'backoff':
      check(isNum(recovery.initialMs, 0), 'recovery.initialMs', 'a number ≥ 0', recovery.initialMs);
      check(isNum(recovery.factor, 1), 'recovery.factor', 'a number ≥ 1', recovery.factor);
      check(isNum(recovery.maxMs, recovery.initialMs), 'recovery.maxMs', 'a number ≥ initialMs', recovery.maxMs);
      check(isNum(recovery.jitter, 0) && recovery.jitter < 1, 'recovery.jitter', 'in [0, 1)', recovery.jitter);
      break;
    case 'health-checks':
      check(isInt(recovery.passes, 1), 'recovery.passes', 'an integer ≥ 1', recovery.passes);
      break;
    default:
      problems.push('recovery.kind must be cool-off, backoff or health-checks');
  }

  const halfOpen = policy.halfOpen;
  switch (halfOpen?.kind) {
    case 'single-trial':
      break;
    case 'share':
      check(isNum(halfOpen.share, 0, 1) && halfOpen.share > 0, 'halfOpen.share', 'in (0, 1]', halfOpen.share);
      break;
    default:
      problems.push('halfOpen.kind must be single-trial or share');
  }

  const close = policy.close;
  switch (close?.kind) {
    case 'first-success':
      break;
    case 'success-rate':
      check(isNum(close.rate, 0) && close.rate < 1, 'close.rate', 'in [0, 1)', close.rate);
      check(isNum(close.durationMs, 0), 'close.durationMs', 'a number ≥ 0', close.durationMs);
      check(isInt(close.minProbes, 0), 'close.minProbes', 'an integer ≥ 0', close.minProbes);
      break;
    default:
      problems.push('close.kind must be first-success or success-rate');
  }

  check(
    policy.onHalfOpenFailure === 'reopen' || policy.onHalfOpenFailure === 'reopen-grow',
    'onHalfOpenFailure',
    "'reopen' or 'reopen-grow'",
    policy.onHalfOpenFailure,
  );
  if (policy.healthFailuresTrip !== undefined)
    check(typeof policy.healthFailuresTrip === 'boolean', 'healthFailuresTrip', 'a boolean', policy.healthFailuresTrip);
  if (policy.slowCallMs !== undefined) check(isNum(policy.slowCallMs, 0), 'slowCallMs', 'a number ≥ 0', policy.slowCallMs);
  if (policy.callTimeoutMs !== undefined) {
    check(isNum(policy.callTimeoutMs, 0) && policy.callTimeoutMs > 0, 'callTimeoutMs', 'a number > 0', policy.callTimeoutMs);
  }
  return problems;
}
