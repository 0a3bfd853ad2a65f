import type { BrokerConfig } from '../config';
import type { WorkerSettings } from './delivery/delivery-worker';

/** The notifications part of the broker's config (WEBHOOK_*, OPS_WEBHOOK_*). */
export type NotificationSettings = BrokerConfig['notifications'];

export function workerSettings(n: NotificationSettings): WorkerSettings {
  return {
    baseMs: n.retryBaseMs,
    maxMs: n.retryMaxMs,
    maxInFlight: n.maxInFlightPerEndpoint,
    leaseMs: n.leaseMs,
    pollIntervalMs: n.pollIntervalMs,
    downAfterFailures: n.downAfterFailures,
    downRetryIntervalMs: n.downRetryIntervalMs,
    breakerFailures: n.breakerFailures,
    breakerResetMs: n.breakerResetMs,
    breakerMaxResetMs: n.breakerMaxResetMs,
  };
}
