import { TokenBucket } from './rate-limits';

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
