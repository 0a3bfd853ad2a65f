/**
 * The provider breaker as a ready-made policy (docs/design.md#provider-breaker); it takes overrides for its
 * documented settings. Other policies are composed from the parts in policy.ts (the app's webhook breakers:
 * apps/broker/src/notifications/delivery/endpoint-policies.ts).
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
