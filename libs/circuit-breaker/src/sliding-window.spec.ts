import { CircuitBreaker, telephonyPolicy, type Outcome } from './index';
import { SlidingWindow } from './sliding-window';
import { SteppedClock } from './testing/stepped-clock';

describe('SlidingWindow', () => {
  it('with one bucket per ms, holds exactly (now − windowMs, now]', () => {
    const window = new SlidingWindow(100, 100);
    window.add(1_000, true);
    window.advance(1_099);
    expect(window.failureCount).toBe(1);
    window.advance(1_100);
    expect(window.failureCount).toBe(0);
  });

  it('with coarser buckets, lets an outcome go up to one bucket early, never late', () => {
    const window = new SlidingWindow(120_000, 120); // 1 s buckets
    window.add(500, true); // bucket 0: [0, 1000)
    window.advance(119_999);
    expect(window.callCount).toBe(1);
    window.advance(120_000); // 119.5 s after it was recorded
    expect(window.callCount).toBe(0);
  });

  it('empties when time jumps by more than the window', () => {
    const window = new SlidingWindow(1_000, 10);
    for (let t = 0; t < 1_000; t += 7) window.add(t, t % 2 === 0);
    window.advance(5_000);
    expect([window.callCount, window.failureCount]).toEqual([0, 0]);
  });

  it('counts time that goes backwards in the newest bucket', () => {
    const window = new SlidingWindow(1_000, 10);
    window.add(5_000, false);
    window.add(4_000, true);
    expect([window.callCount, window.failureCount]).toEqual([2, 1]);
  });
});

describe('window memory', () => {
  it('stays bounded by the bucket count after 10^6 outcomes', () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    const clock = new SteppedClock();
    const breaker = new CircuitBreaker(telephonyPolicy(), { scheduler: clock });
    const success: Outcome = { kind: 'success' };
    const failure: Outcome = { kind: 'failure', reason: 'HTTP 503' };
    const record = (n: number): void => {
      for (let i = 0; i < n; i++) {
        clock.frame += 1; // 1 ms apart: the window keeps sliding
        breaker.record(i % 25 === 0 ? failure : success); // 4 %: under the 10 % rule, never 5 in a row
      }
    };
    record(10_000); // warm up
    gc?.();
    const before = process.memoryUsage().heapUsed;
    record(1_000_000);
    gc?.();
    const grown = process.memoryUsage().heapUsed - before;

    const { state, windowCalls } = breaker.status();
    expect(state).toBe('CLOSED');
    // The last 2 minutes at one call per ms, less the unfilled part of the oldest 1 s bucket.
    expect(windowCalls).toBeGreaterThan(119_000);
    expect(windowCalls).toBeLessThanOrEqual(120_000);
    const [window] = breaker.toJSON().windows;
    expect([window.calls.length, window.failures.length]).toEqual([120, 120]);
    // Keeping each outcome would take tens of MB; the ring takes two arrays of 120 numbers.
    expect(grown).toBeLessThan((gc ? 2 : 16) * 1024 * 1024);
  });
});
