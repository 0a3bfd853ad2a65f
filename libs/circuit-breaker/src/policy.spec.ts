import { CircuitBreaker, telephonyPolicy, validatePolicy, type BreakerPolicy } from './index';

describe('validatePolicy', () => {
  it('accepts every preset', () => {
    expect(validatePolicy(telephonyPolicy())).toEqual([]);
  });

  it('names each field that is out of range', () => {
    const policy = telephonyPolicy({ consecutiveFailures: 0, windowErrorRate: 1.5, halfOpenProbeShare: 0, closeMinProbes: -1 });
    expect(validatePolicy(policy)).toEqual([
      'trip[0].failures must be an integer ≥ 1 (got 0)',
      'trip[1].errorRate must be in [0, 1) (got 1.5)',
      'halfOpen.share must be in (0, 1] (got 0)',
      'close.minProbes must be an integer ≥ 0 (got -1)',
    ]);
  });

  it('refuses more buckets than milliseconds in the window', () => {
    expect(validatePolicy(telephonyPolicy({ windowMs: 100, windowBuckets: 200 }))).toEqual([
      'trip[1].buckets must be an integer in [1, min(windowMs, 100000)] (got 200)',
    ]);
  });

  it('makes the constructor throw a RangeError', () => {
    const policy: BreakerPolicy = { ...telephonyPolicy(), recovery: { kind: 'backoff', initialMs: 10, factor: 0.5, maxMs: 5, jitter: 0 } };
    expect(() => new CircuitBreaker(policy)).toThrow(
      new RangeError(
        'invalid breaker policy: recovery.factor must be a number ≥ 1 (got 0.5); recovery.maxMs must be a number ≥ initialMs (got 5)',
      ),
    );
  });
});
