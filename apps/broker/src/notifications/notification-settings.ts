import type { BrokerConfig } from '../config';
import type { WorkerSettings } from './delivery/delivery-worker';

/** How long an endpoint's lane waits for more work before releasing the endpoint (at most the poll interval). */
export const LANE_LINGER_MS = 500;

/** The notifications part of the broker's config (WEBHOOK_*, OPS_WEBHOOK_*). */
export type NotificationSettings = BrokerConfig['notifications'];

export function workerSettings(n: NotificationSettings): WorkerSettings {
  return {
    baseMs: n.retryBaseMs,
    maxMs: n.retryMaxMs,
    maxInFlight: n.maxInFlightPerEndpoint,
    leaseMs: n.leaseMs,
    pollIntervalMs: n.pollIntervalMs,
    lingerMs: Math.min(n.pollIntervalMs, LANE_LINGER_MS),
    downAfterFailures: n.downAfterFailures,
    downRetryIntervalMs: n.downRetryIntervalMs,
    breakerFailures: n.breakerFailures,
    breakerResetMs: n.breakerResetMs,
    breakerMaxResetMs: n.breakerMaxResetMs,
  };
}
