/**
 * The webhook lane's two breakers as policies of @app/circuit-breaker (docs/webhooks.md#delivery-rules and
 * docs/design.md#other-breakers-in-the-library): the per-callback-URL breaker and the "endpoint down" rule.
 * Each takes overrides for its documented settings; EndpointHealth builds both from the config.
 */
import type { BreakerPolicy } from '@app/circuit-breaker';

/** The per-callback-URL breaker (docs/design.md#other-breakers-in-the-library). */
interface CallbackUrlSettings {
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

const CALLBACK_URL_DEFAULTS: CallbackUrlSettings = Object.freeze({
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

/** The endpoint-down rule (docs/design.md#other-breakers-in-the-library). */
interface EndpointDownSettings {
  /** Failures in a row after which the endpoint is considered down. */
  readonly failuresInARow: number;
  /** While down, one attempt every this long. */
  readonly attemptEveryMs: number;
}

const ENDPOINT_DOWN_DEFAULTS: EndpointDownSettings = Object.freeze({
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
