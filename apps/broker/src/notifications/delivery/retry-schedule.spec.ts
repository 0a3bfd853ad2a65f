import fc from 'fast-check';
import { REFERENCE_RETRY_SCHEDULE, nextAttemptAt, retryDelayBounds, retryDelayMs } from './retry-schedule';

describe('the retry schedule (docs/webhooks.md#delivery-rules)', () => {
  // The table of docs/webhooks.md#delivery-rules: after the nth failure, the wait in seconds, from base to base + 50 %.
  const table: Array<[number, number, number]> = [
    [1, 5, 7.5],
    [2, 10, 15],
    [3, 20, 30],
    [4, 40, 60],
    [5, 80, 120],
    [6, 160, 240],
    [7, 240, 300],
    [8, 240, 300],
    [50, 240, 300],
  ];

  it.each(table)('after failure %i waits from %i s to %i s', (failures, minSec, maxSec) => {
    expect(retryDelayMs(failures, 0)).toBe(minSec * 1000);
    expect(retryDelayMs(failures, 0.999_999)).toBe(maxSec * 1000);
    expect(retryDelayBounds(failures)).toEqual({ min: minSec * 1000, max: maxSec * 1000 });
  });

  it('doubles from 5 s with up to +50 % jitter, capped at 5 min, for any failure count and any draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (failures, random) => {
          const delay = retryDelayMs(failures, random);
          const { min, max } = retryDelayBounds(failures);
          expect(delay).toBeGreaterThanOrEqual(min);
          expect(delay).toBeLessThanOrEqual(max);
          expect(delay).toBeLessThanOrEqual(REFERENCE_RETRY_SCHEDULE.maxMs);
        },
      ),
    );
  });

  it('spreads the waits: different draws give different waits', () => {
    const waits = new Set([0, 0.25, 0.5, 0.75].map((r) => retryDelayMs(3, r)));
    expect(waits.size).toBe(4);
  });

  it('scales with shortened settings', () => {
    const fast = { baseMs: 10, maxMs: 100 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 0, fast))).toEqual([10, 20, 40, 80, 80]);
  });

  it('never schedules an attempt after the give-up time', () => {
    const now = 1_000_000;
    expect(nextAttemptAt(now, 7, 0.5, now + 60_000)).toBe(now + 60_000);
    expect(nextAttemptAt(now, 1, 0, now + 60_000)).toBe(now + 5_000);
  });

  it('has no attempt limit: any failure count has a next wait', () => {
    expect(retryDelayMs(1_000_000, 0.5)).toBe(270_000);
  });
});
