/**
 * The wait between attempts of one webhook (docs/webhooks.md#delivery-rules): after the nth failure, base × 2^(n−1)
 * plus up to half again at random; once that reaches the cap, between 80 % and 100 % of the cap.
 * With the defaults: 5–7.5 s, 10–15 s, 20–30 s, 40–60 s, 80–120 s, 160–240 s, then 240–300 s.
 */
export interface RetrySchedule {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const REFERENCE_RETRY_SCHEDULE: RetrySchedule = Object.freeze({ baseMs: 5_000, maxMs: 300_000 });

/** `failures` ≥ 1 is how many attempts failed so far; `random` is in [0, 1). */
export function retryDelayMs(failures: number, random: number, schedule: RetrySchedule = REFERENCE_RETRY_SCHEDULE): number {
  if (!Number.isInteger(failures) || failures < 1) throw new RangeError(`failures must be an integer ≥ 1 (got ${failures})`);
  const raw = schedule.baseMs * 2 ** Math.min(failures - 1, 60);
  if (raw >= schedule.maxMs) return Math.round(schedule.maxMs * (0.8 + 0.2 * random));
  return Math.min(Math.round(raw * (1 + 0.5 * random)), schedule.maxMs);
}

/** The bounds `retryDelayMs` stays within after the nth failure. */
export function retryDelayBounds(failures: number, schedule: RetrySchedule = REFERENCE_RETRY_SCHEDULE): { min: number; max: number } {
  const raw = schedule.baseMs * 2 ** Math.min(failures - 1, 60);
  if (raw >= schedule.maxMs) return { min: Math.round(schedule.maxMs * 0.8), max: schedule.maxMs };
  return { min: raw, max: Math.min(Math.round(raw * 1.5), schedule.maxMs) };
}

/** When the next attempt goes, never later than the moment the webhook is given up. */
export function nextAttemptAt(now: number, failures: number, random: number, expiresAt: number, schedule?: RetrySchedule): number {
  return Math.min(now + retryDelayMs(failures, random, schedule), expiresAt);
}
