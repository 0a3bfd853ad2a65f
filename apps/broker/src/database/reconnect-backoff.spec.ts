import { LISTEN_RECONNECT, reconnectDelayMs } from './reconnect-backoff';

describe('reconnectDelayMs', () => {
  const middle = () => 0.5;

  it('starts at 250 ms and doubles with each failed attempt', () => {
    expect([1, 2, 3, 4, 5].map((n) => reconnectDelayMs(n, LISTEN_RECONNECT, middle))).toEqual([250, 500, 1000, 2000, 4000]);
  });

  it('stays at 5 s from the sixth attempt on, however many follow', () => {
    expect(reconnectDelayMs(6, LISTEN_RECONNECT, middle)).toBe(5000);
    expect(reconnectDelayMs(7, LISTEN_RECONNECT, middle)).toBe(5000);
    expect(reconnectDelayMs(10_000, LISTEN_RECONNECT, middle)).toBe(5000);
  });

  it('moves each pause by at most 20 % either way', () => {
    expect(reconnectDelayMs(1, LISTEN_RECONNECT, () => 0)).toBe(200);
    expect(reconnectDelayMs(1, LISTEN_RECONNECT, () => 0.999_999)).toBe(300);
    expect(reconnectDelayMs(6, LISTEN_RECONNECT, () => 0)).toBe(4000);
    expect(reconnectDelayMs(6, LISTEN_RECONNECT, () => 0.999_999)).toBe(6000);
  });

  it('spreads replicas that lost the connection together', () => {
    const draws = [0.1, 0.4, 0.7, 0.95];
    const delays = draws.map((r) => reconnectDelayMs(3, LISTEN_RECONNECT, () => r));
    expect(new Set(delays).size).toBe(draws.length);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(800);
    for (const d of delays) expect(d).toBeLessThanOrEqual(1200);
  });

  it('treats an attempt below 1 as the first', () => {
    expect(reconnectDelayMs(0, LISTEN_RECONNECT, middle)).toBe(250);
  });
});
