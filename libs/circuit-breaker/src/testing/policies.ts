/**
 * Policies the lib's specs exercise besides the telephony preset: the ratio rule with a cool-off, and a
 * consecutive-failures rule with a cool-off (the shape of the app's "endpoint down" rule). Not exported
 * from the lib: the app composes its own (apps/broker/src/notifications/delivery/endpoint-policies.ts).
 */
import type { BreakerPolicy } from '../policy';

/** The ratio breaker with a floor (docs/design.md#other-breakers-in-the-library); settings named as in the system it comes from. */
interface ProviderFailoverSettings {
  /** The floor: the breaker opens only once strictly more attempts than this were recorded. */
  readonly minAttempts: number;
  /** CB_THRESHOLD_RATIO: opens when failures / attempts reaches this. */
  readonly thresholdRatio: number;
  /** CB_COOLDOWN_SECONDS × 1000: how long an open breaker holds its provider out. */
  readonly coolOffMs: number;
}

const PROVIDER_FAILOVER_DEFAULTS: ProviderFailoverSettings = Object.freeze({
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

/** After 3 failures in a row the resource is out and gets a single attempt every 5 minutes; its first success brings it back. */
export function coolOffPolicy(): BreakerPolicy {
  return {
    trip: [{ kind: 'consecutive-failures', failures: 3 }],
    recovery: { kind: 'cool-off', ms: 300_000 },
    halfOpen: { kind: 'single-trial' },
    close: { kind: 'first-success' },
    onHalfOpenFailure: 'reopen',
  };
}
