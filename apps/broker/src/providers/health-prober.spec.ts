/**
 * The health-check cadence in virtual time (Jest's fake timers drive the prober's interval and the
 * breaker's clock; the advisory lock is taken on a real PostgreSQL): one check every
 * BREAKER_HEALTH_INTERVAL_MS while a provider's breaker is OPEN or HALF_OPEN, none while it is CLOSED.
 */
import { jest } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { CircuitBreaker, telephonyPolicy } from '@app/circuit-breaker';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { loadConfig } from '../config';
import { HealthProber } from './health-prober';
import type { ProviderRegistry } from './provider-registry';

const INTERVAL = 30_000;
const T0 = Date.UTC(2026, 6, 15, 12, 0, 0);

describe('HealthProber cadence', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: [], poolSize: 2 })).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('checks every BREAKER_HEALTH_INTERVAL_MS while OPEN or HALF_OPEN, and never while CLOSED', async () => {
    jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    // The provider breaker with closing made quick: 2 passes to HALF_OPEN, then 3 probes over 60 s close it.
    const breaker = new CircuitBreaker(telephonyPolicy({ halfOpenAfterPasses: 2, closeAfterMs: 60_000, closeMinProbes: 3 }));
    const checks: Array<{ at: number; state: string }> = [];
    let healthy = false;
    // The registry's two faces the prober uses, over one real breaker of the library.
    const registry = {
      healthAll: () => [{ name: 'primary', disabled: false, disabledReason: null, status: breaker.status() }],
      healthCheck: (name: string) => {
        checks.push({ at: Date.now() - T0, state: breaker.status().state });
        breaker.record(healthy ? { kind: 'health-pass' } : { kind: 'health-fail', reason: 'down' });
        return Promise.resolve(
          healthy
            ? { ok: true, value: undefined, latencyMs: 1 }
            : { ok: false, latencyMs: 1, failure: { reason: `${name} down`, countsAgainstProvider: true } },
        );
      },
    } as unknown as ProviderRegistry;
    const prober = new HealthProber(
      loadConfig({ BREAKER_HEALTH_INTERVAL_MS: String(INTERVAL) }),
      registry,
      new SchedulerRegistry(),
      dataSource,
    );
    prober.onApplicationBootstrap();
    const wait = async (intervals: number) => {
      for (let i = 0; i < intervals; i++) {
        jest.advanceTimersByTime(INTERVAL);
        // The round started by the interval: lock, check, unlock on the real database.
        await prober.settled();
      }
    };
    try {
      await wait(5); // CLOSED: 2.5 min, no check
      expect(checks).toEqual([]);

      for (let i = 0; i < 5; i++) breaker.record({ kind: 'failure', reason: 'HTTP 503' });
      expect(breaker.status().state).toBe('OPEN');
      await wait(3); // OPEN, failing
      healthy = true;
      await wait(2); // OPEN, 2 passes → HALF_OPEN
      expect(breaker.status().state).toBe('HALF_OPEN');
      await wait(3); // HALF_OPEN probes; the 3rd, 60 s in, closes it
      expect(breaker.status().state).toBe('CLOSED');
      await wait(5); // CLOSED again: nothing
      const at = (n: number) => (5 + n) * INTERVAL;
      expect(checks).toEqual([
        { at: at(1), state: 'OPEN' },
        { at: at(2), state: 'OPEN' },
        { at: at(3), state: 'OPEN' },
        { at: at(4), state: 'OPEN' },
        { at: at(5), state: 'OPEN' },
        { at: at(6), state: 'HALF_OPEN' },
        { at: at(7), state: 'HALF_OPEN' },
        { at: at(8), state: 'HALF_OPEN' },
      ]);
    } finally {
      await prober.onApplicationShutdown();
      breaker.dispose();
    }
  });
});
