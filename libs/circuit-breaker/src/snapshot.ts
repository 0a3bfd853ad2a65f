import type { BreakerState } from './breaker-status';

/** A sliding window's buckets, in ring order; `head` is the absolute index of the newest bucket (null when empty). */
export interface WindowSnapshot {
  readonly windowMs: number;
  readonly buckets: number;
  readonly head: number | null;
  readonly calls: number[];
  readonly failures: number[];
}

/**
 * Everything needed to carry a breaker across a restart or to another replica, as plain JSON.
 * A trial call in flight is not carried: its outcome would arrive at the old process.
 */
export interface BreakerSnapshot {
  readonly version: 1;
  readonly state: BreakerState;
  readonly since: number;
  readonly openedAt: number | null;
  readonly retryAt: number | null;
  readonly retryDelayMs: number | null;
  readonly lastError: string | null;
  readonly reason: string;
  readonly opens: number;
  readonly consecutiveFailures: number;
  readonly attempts: number;
  readonly failures: number;
  readonly lastFailure: string | null;
  readonly windows: WindowSnapshot[];
  readonly healthPasses: number;
  readonly probes: number;
  readonly probeSuccesses: number;
  /** Absent from snapshots written before it was counted: read as 0. */
  readonly trafficProbes?: number;
  readonly halfOpenAdmissions: number;
}

const STATES: readonly string[] = ['CLOSED', 'OPEN', 'HALF_OPEN'];

/** Throws a TypeError naming the first thing that makes `value` not a usable version-1 snapshot. */
export function assertSnapshot(value: unknown): asserts value is BreakerSnapshot {
  if (typeof value !== 'object' || value === null) throw new TypeError('breaker snapshot must be an object');
  const s = value as Record<string, unknown>;
  if (s.version !== 1) throw new TypeError(`unsupported breaker snapshot version ${JSON.stringify(s.version)}`);
  if (typeof s.state !== 'string' || !STATES.includes(s.state))
    throw new TypeError(`invalid breaker snapshot state ${JSON.stringify(s.state)}`);
  for (const key of [
    'since',
    'opens',
    'consecutiveFailures',
    'attempts',
    'failures',
    'healthPasses',
    'probes',
    'probeSuccesses',
    'halfOpenAdmissions',
  ]) {
    if (typeof s[key] !== 'number' || !Number.isFinite(s[key])) throw new TypeError(`breaker snapshot ${key} must be a finite number`);
  }
  if (s.trafficProbes !== undefined && (typeof s.trafficProbes !== 'number' || !Number.isFinite(s.trafficProbes)))
    throw new TypeError('breaker snapshot trafficProbes must be a finite number');
  for (const key of ['openedAt', 'retryAt', 'retryDelayMs']) {
    if (s[key] !== null && (typeof s[key] !== 'number' || !Number.isFinite(s[key]))) {
      throw new TypeError(`breaker snapshot ${key} must be a number or null`);
    }
  }
  for (const key of ['lastError', 'lastFailure']) {
    if (s[key] !== null && typeof s[key] !== 'string') throw new TypeError(`breaker snapshot ${key} must be a string or null`);
  }
  if (typeof s.reason !== 'string') throw new TypeError('breaker snapshot reason must be a string');
  if (!Array.isArray(s.windows)) throw new TypeError('breaker snapshot windows must be an array');
}
