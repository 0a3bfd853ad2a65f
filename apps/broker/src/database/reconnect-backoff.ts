/**
 * How long to wait before re-making a lost database connection: `firstMs` before the first attempt,
 * doubling with each failed one up to `maxMs`, each pause moved by up to ±`jitter` of itself so that
 * replicas that lost the database together (a failover) do not all come back in the same instant.
 */
export interface Backoff {
  readonly firstMs: number;
  readonly maxMs: number;
  /** 0..1: the share of each pause drawn at random either side of it. */
  readonly jitter: number;
}

/** The LISTEN connection's: 250 ms, 500 ms, 1 s, 2 s, 4 s, then 5 s, each ±20 %. */
export const LISTEN_RECONNECT: Backoff = { firstMs: 250, maxMs: 5_000, jitter: 0.2 };

/** The pause before reconnect attempt `attempt` (1 for the first after a loss); `random` in [0, 1). */
export function reconnectDelayMs(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const base = Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (1 + backoff.jitter * (2 * random() - 1)));
}
