import { loadConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { RateLimits, TokenBucket } from './rate-limits';

describe('TokenBucket', () => {
  it('lets a full burst through, refuses the next with the wait until a token, and refills at the rate', () => {
    const bucket = new TokenBucket({ perSecond: 2, burst: 3 }, 0);
    expect([bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([0, 0, 0]);
    expect(bucket.take(0)).toBe(500);
    expect(bucket.take(499)).toBe(2);
    expect(bucket.take(500)).toBe(0);
    expect(bucket.take(500)).toBe(500);
  });

  it('never holds more than the burst, however long it waited', () => {
    const bucket = new TokenBucket({ perSecond: 10, burst: 2 }, 0);
    expect([bucket.take(3_600_000), bucket.take(3_600_000), bucket.take(3_600_000)]).toEqual([0, 0, 100]);
  });

  it('neither refills nor owes tokens when the clock steps back, and refills from there on', () => {
    const bucket = new TokenBucket({ perSecond: 2, burst: 2 }, 86_400_000);
    expect([bucket.take(86_400_000), bucket.take(86_400_000)]).toEqual([0, 0]);
    expect(bucket.take(0)).toBe(500);
    expect(bucket.take(500)).toBe(0);
  });
});

describe('RateLimits: wrong credentials per client address', () => {
  function limits(perSecond: number, burst: number) {
    const clock = { at: 0, now: () => clock.at };
    const config = loadConfig({
      DATABASE_URL: 'postgres://unused',
      RATE_LIMIT_AUTH_FAILURES_PER_SECOND: String(perSecond),
      RATE_LIMIT_AUTH_FAILURES_BURST: String(burst),
    });
    return { clock, rateLimits: new RateLimits(config, clock, new BrokerMetrics()) };
  }

  it('answers 0 (a 401) for the burst of wrong ones from an address, then the wait until a token (a 429); other addresses are untouched', () => {
    const { clock, rateLimits } = limits(0.5, 3);
    expect([0, 1, 2].map(() => rateLimits.noteAuthFailure('10.0.0.1'))).toEqual([0, 0, 0]);
    expect(rateLimits.noteAuthFailure('10.0.0.1')).toBe(2000);
    expect(rateLimits.noteAuthFailure('10.0.0.2')).toBe(0);
    clock.at = 1999;
    expect(rateLimits.noteAuthFailure('10.0.0.1')).toBe(1);
    clock.at = 2000;
    expect(rateLimits.noteAuthFailure('10.0.0.1')).toBe(0);
    expect(rateLimits.noteAuthFailure('10.0.0.1')).toBe(2000);
  });
});
