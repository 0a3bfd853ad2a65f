/**
 * The provider breaker and three others as ready-made policies (docs/design.md#provider-breaker and
 * #other-breakers-in-the-library). Each takes overrides for its documented settings.
 */
import type { BreakerPolicy } from './policy';

/** The provider breaker (docs/design.md#provider-breaker); names mirror the app's BREAKER_* variables. */
export interface TelephonySettings {
  /** BREAKER_CONSECUTIVE_FAILURES: the Nth failure in a row trips. */
  readonly consecutiveFailures: number;
  /** BREAKER_WINDOW_MS: length of the sliding error-rate window. */
  readonly windowMs: number;
  /** BREAKER_WINDOW_ERROR_RATE: trips when the window's error rate is strictly greater. */
  readonly windowErrorRate: number;
  /** BREAKER_WINDOW_MIN_CALLS: the window rule needs at least this many calls (1 gives the literal reading). */
  readonly windowMinCalls: number;
  /** Time buckets of the window (its resolution is windowMs / windowBuckets). */
  readonly windowBuckets: number;
  /** BREAKER_HALF_OPEN_AFTER_PASSES: consecutive passing health checks that move OPEN to HALF_OPEN. */
  readonly halfOpenAfterPasses: number;
  /** BREAKER_HALF_OPEN_PROBE_SHARE: deterministic share of new calls that probe in HALF_OPEN (0.1: every 10th). */
  readonly halfOpenProbeShare: number;
  /** BREAKER_CLOSE_SUCCESS_RATE: HALF_OPEN closes when probe success is strictly greater… */
  readonly closeSuccessRate: number;
  /** BREAKER_CLOSE_AFTER_MS: …after at least this long in HALF_OPEN… */
  readonly closeAfterMs: number;
  /** BREAKER_CLOSE_MIN_PROBES: …and at least this many probes. */
  readonly closeMinProbes: number;
  /** BREAKER_SLOW_CALL_MS: a probe success slower than this is not counted as a success (and does not re-open). */
  readonly slowCallMs: number;
}

export const TELEPHONY_DEFAULTS: TelephonySettings = Object.freeze({
  consecutiveFailures: 5,
  windowMs: 120_000,
  windowErrorRate: 0.1,
  windowMinCalls: 10,
  windowBuckets: 120,
  halfOpenAfterPasses: 5,
  halfOpenProbeShare: 0.1,
  closeSuccessRate: 0.95,
  closeAfterMs: 300_000,
  closeMinProbes: 10,
  slowCallMs: 2_000,
});

/**
 * 5 consecutive failures, or > 10 % errors over a sliding 2 minutes with at least 10 calls, open the breaker;
 * a failing health check while CLOSED counts as a failed call (a resource without traffic to tell); 5 passing
 * health checks in a row move it to HALF_OPEN, where every 10th new call and every health check probe; any
 * probe failure re-opens; > 95 % probe success over at least 5 minutes and 10 probe calls closes (health
 * checks alone never close it).
 */
export function telephonyPolicy(settings: Partial<TelephonySettings> = {}): BreakerPolicy {
  const s = { ...TELEPHONY_DEFAULTS, ...settings };
  return {
    trip: [
      { kind: 'consecutive-failures', failures: s.consecutiveFailures },
      {
        kind: 'window-error-rate',
        windowMs: s.windowMs,
        errorRate: s.windowErrorRate,
        minCalls: s.windowMinCalls,
        buckets: s.windowBuckets,
      },
    ],
    recovery: { kind: 'health-checks', passes: s.halfOpenAfterPasses },
    halfOpen: { kind: 'share', share: s.halfOpenProbeShare },
    close: { kind: 'success-rate', rate: s.closeSuccessRate, durationMs: s.closeAfterMs, minProbes: s.closeMinProbes },
    onHalfOpenFailure: 'reopen',
    healthFailuresTrip: true,
    slowCallMs: s.slowCallMs,
  };
}

/** The per-callback-URL breaker (docs/design.md#other-breakers-in-the-library). */
export interface CallbackUrlSettings {
  /** Max failures: consecutive failures that open the circuit. */
  readonly maxFailures: number;
  /** Reset timeout: how long the first opening lasts before a test request. */
  readonly resetTimeoutMs: number;
  /** Max reset timeout: cap on the grown timeout (before jitter). */
  readonly maxResetTimeoutMs: number;
  /** Backoff factor: multiplier applied after each failed test request. */
  readonly backoffFactor: number;
  /** Randomization factor: ± fraction of jitter on each reset timeout. */
  readonly randomizationFactor: number;
  /** Call timeout: a callback that has not answered after this long is a failure. */
  readonly callTimeoutMs: number;
}

export const CALLBACK_URL_DEFAULTS: CallbackUrlSettings = Object.freeze({
  maxFailures: 5,
  resetTimeoutMs: 60_000,
  maxResetTimeoutMs: 600_000,
  backoffFactor: 2,
  randomizationFactor: 0.2,
  callTimeoutMs: 5_000,
});

/**
 * 5 consecutive failures open it; after 1 min (± 20 %) one test callback is attempted; success closes,
 * failure re-opens with the wait doubled: 1, 2, 4, 8, then 10 minutes capped.
 */
export function callbackUrlPolicy(settings: Partial<CallbackUrlSettings> = {}): BreakerPolicy {
  const s = { ...CALLBACK_URL_DEFAULTS, ...settings };
  return {
    trip: [{ kind: 'consecutive-failures', failures: s.maxFailures }],
    recovery: {
      kind: 'backoff',
      initialMs: s.resetTimeoutMs,
      factor: s.backoffFactor,
      maxMs: s.maxResetTimeoutMs,
      jitter: s.randomizationFactor,
    },
    halfOpen: { kind: 'single-trial' },
    close: { kind: 'first-success' },
    onHalfOpenFailure: 'reopen-grow',
    callTimeoutMs: s.callTimeoutMs,
  };
}

/** The ratio breaker with a floor (docs/design.md#other-breakers-in-the-library); settings named as in the system it comes from. */
export interface ProviderFailoverSettings {
  /** The floor: the breaker opens only once strictly more attempts than this were recorded. */
  readonly minAttempts: number;
  /** CB_THRESHOLD_RATIO: opens when failures / attempts reaches this. */
  readonly thresholdRatio: number;
  /** CB_COOLDOWN_SECONDS × 1000: how long an open breaker holds its provider out. */
  readonly coolOffMs: number;
}

export const PROVIDER_FAILOVER_DEFAULTS: ProviderFailoverSettings = Object.freeze({
  minAttempts: 10,
  thresholdRatio: 0.2,
  coolOffMs: 30_000,
});

/**
 * Opens when more than 10 attempts were recorded and at least one in five failed; after a 30 s cool-off the
 * next request goes through with the counters reset: a success closes, a failure re-opens for another cool-off.
 */
export function providerFailoverPolicy(settings: Partial<ProviderFailoverSettings> = {}): BreakerPolicy {
  const s = { ...PROVIDER_FAILOVER_DEFAULTS, ...settings };
  return {
    trip: [{ kind: 'failure-ratio', minAttempts: s.minAttempts, ratio: s.thresholdRatio }],
    recovery: { kind: 'cool-off', ms: s.coolOffMs },
    halfOpen: { kind: 'single-trial' },
    close: { kind: 'first-success' },
    onHalfOpenFailure: 'reopen',
  };
}

/** The endpoint-down rule (docs/design.md#other-breakers-in-the-library). */
export interface EndpointDownSettings {
  /** Failures in a row after which the endpoint is considered down. */
  readonly failuresInARow: number;
  /** While down, one attempt every this long. */
  readonly attemptEveryMs: number;
}

export const ENDPOINT_DOWN_DEFAULTS: EndpointDownSettings = Object.freeze({
  failuresInARow: 3,
  attemptEveryMs: 300_000,
});

/** After 3 failures in a row the endpoint is down and gets a single attempt every 5 minutes; its first 2xx brings it back. */
export function endpointDownPolicy(settings: Partial<EndpointDownSettings> = {}): BreakerPolicy {
  const s = { ...ENDPOINT_DOWN_DEFAULTS, ...settings };
  return {
    trip: [{ kind: 'consecutive-failures', failures: s.failuresInARow }],
    recovery: { kind: 'cool-off', ms: s.attemptEveryMs },
    halfOpen: { kind: 'single-trial' },
    close: { kind: 'first-success' },
    onHalfOpenFailure: 'reopen',
  };
}
