/**
 * The health-check cadence in virtual time (Jest's fake timers drive the prober's interval and the
 * breaker's clock): one check every BREAKER_HEALTH_INTERVAL_MS while a provider's breaker is OPEN or
 * HALF_OPEN, none while it is CLOSED, and none at all on a replica that follows the breaker leader.
 */
import { jest } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CircuitBreaker, telephonyPolicy, type BreakerSnapshot } from '@app/circuit-breaker';
import { loadConfig } from '../config';
import type { BreakerStateStore } from './breaker-state.store';
import type { Leadership } from './cluster/breaker-leadership';
import { HealthProber } from './health-prober';
import type { ProviderBreakers } from './provider-breakers';
import type { ProviderRegistry } from './provider-registry';
import type { LeaderFence } from './provider-state.repository';

const INTERVAL = 30_000;
const T0 = Date.UTC(2026, 6, 15, 12, 0, 0);

describe('HealthProber cadence', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  /** A prober over one real breaker of the library, with the faces of its collaborators it uses. */
  function setUp(leadership: { decidesHere: boolean; current: Leadership }) {
    // The provider breaker with closing made quick: 2 passes to HALF_OPEN, then 3 probe calls and 60 s close it.
    const breaker = new CircuitBreaker(telephonyPolicy({ halfOpenAfterPasses: 2, closeAfterMs: 60_000, closeMinProbes: 3 }));
    const checks: Array<{ at: number; state: string }> = [];
    const persisted: Array<{ healthPasses: number; fence: LeaderFence }> = [];
    const state = { healthy: false };
    const breakers = {
      healthAll: () => [{ name: 'primary', disabled: false, disabledReason: null, status: breaker.status() }],
      get: () => breaker,
    } as unknown as ProviderBreakers;
    const store = {
      recordSnapshot: (_: string, snapshot: BreakerSnapshot, fence: LeaderFence) =>
        persisted.push({ healthPasses: snapshot.healthPasses, fence }),
    } as unknown as BreakerStateStore;
    const registry = {
      healthCheck: (name: string) => {
        checks.push({ at: Date.now() - T0, state: breaker.status().state });
        breaker.record(state.healthy ? { kind: 'health-pass' } : { kind: 'health-fail', reason: 'down' });
        return Promise.resolve(
          state.healthy
            ? { ok: true, value: undefined, latencyMs: 1 }
            : { ok: false, latencyMs: 1, failure: { reason: `${name} down`, countsAgainstProvider: true } },
        );
      },
    } as unknown as ProviderRegistry;
    const prober = new HealthProber(
      loadConfig({ BREAKER_HEALTH_INTERVAL_MS: String(INTERVAL) }),
      registry,
      breakers,
      leadership,
      store,
      new SchedulerRegistry(),
    );
    prober.onApplicationBootstrap();
    const wait = async (intervals: number) => {
      for (let i = 0; i < intervals; i++) {
        jest.advanceTimersByTime(INTERVAL);
        await prober.settled();
      }
    };
    return { breaker, checks, persisted, state, prober, wait };
  }

  const FENCE = { holder: 'replica-a', epoch: 3 };

  it('checks every BREAKER_HEALTH_INTERVAL_MS while OPEN or HALF_OPEN, and never while CLOSED', async () => {
    jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const { breaker, checks, persisted, state, prober, wait } = setUp({
      decidesHere: true,
      current: { scope: 'cluster', leader: 'replica-a', fence: FENCE },
    });
    const healthy = (value: boolean) => (state.healthy = value);
    try {
      await wait(5); // CLOSED: 2.5 min, no check
      expect(checks).toEqual([]);

      for (let i = 0; i < 5; i++) breaker.record({ kind: 'failure', reason: 'HTTP 503' });
      expect(breaker.status().state).toBe('OPEN');
      await wait(3); // OPEN, failing
      healthy(true);
      await wait(2); // OPEN, 2 passes → HALF_OPEN
      expect(breaker.status().state).toBe('HALF_OPEN');
      for (let i = 0; i < 3; i++) breaker.record({ kind: 'success', probe: true }); // probe sessions: health checks alone never close
      await wait(3); // HALF_OPEN: one check, then the close gate, 60 s in, closes it
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
      ]);
      // The leader persists the breaker after every check, under its fence: the pass count survives it.
      expect(persisted.map((p) => p.healthPasses).slice(0, 5)).toEqual([0, 0, 0, 1, 0]);
      expect(persisted.every((p) => p.fence === FENCE)).toBe(true);
    } finally {
      await prober.onApplicationShutdown();
      breaker.dispose();
    }
  });

  it('checks nothing on a replica that follows the leader, even with a breaker OPEN', async () => {
    jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const { breaker, checks, persisted, prober, wait } = setUp({
      decidesHere: false,
      current: { scope: 'cluster', leader: 'replica-b', fence: null },
    });
    try {
      for (let i = 0; i < 5; i++) breaker.record({ kind: 'failure', reason: 'HTTP 503' });
      await wait(4);
      expect(checks).toEqual([]);
      expect(persisted).toEqual([]);
    } finally {
      await prober.onApplicationShutdown();
      breaker.dispose();
    }
  });
});
