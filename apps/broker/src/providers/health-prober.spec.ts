/**
 * The health-check cadence in virtual time (Jest's fake timers drive the prober's timers and the breakers'
 * clock): one check every BREAKER_HEALTH_INTERVAL_MS while a provider's breaker is OPEN or HALF_OPEN; while
 * CLOSED none for a provider that keeps sessions, and one every BREAKER_CLOSED_CHECK_INTERVAL_MS for one that
 * keeps none, a failing one counting as a call-setup failure; none at all on a replica that follows the
 * breaker leader; and one per interval across a change of leader, the cluster's last check (kept by the
 * repository, here a stand-in with its rule: granted once the last claim is `minGap` old) deciding the new
 * leader's first.
 */
import { jest } from '@jest/globals';
import { BehaviorSubject } from 'rxjs';
import { CircuitBreaker, telephonyPolicy, type BreakerSnapshot } from '@app/circuit-breaker';
import { loadConfig } from '../config';
import type { BreakerStateStore } from './breaker-state.store';
import type { BreakerLeadership, Leadership } from './cluster/breaker-leadership';
import { HealthProber } from './health-prober';
import type { ProviderBreakers } from './provider-breakers';
import type { ProviderRegistry } from './provider-registry';
import type { HealthCheckClaim, LeaderFence, ProviderStateRepository } from './provider-state.repository';

const INTERVAL = 30_000;
const CLOSED_INTERVAL = 20_000;
const T0 = Date.UTC(2026, 6, 15, 12, 0, 0);
const FENCE_A = { holder: 'replica-a', epoch: 3 };
const FENCE_B = { holder: 'replica-b', epoch: 4 };
const leading = (fence: LeaderFence): Leadership => ({ scope: 'cluster', leader: fence.holder, fence });
const following = (leader: string): Leadership => ({ scope: 'cluster', leader, fence: null });

/** The cluster's side: who leads (the fence that writes) and each provider's last claimed check, as the repository keeps them. */
class Cluster {
  fence: LeaderFence | null = null;
  readonly lastClaim = new Map<string, number>();

  /** A database that does not answer (a replica really cut off): every claim fails. */
  unreachable = false;

  claimHealthCheck(provider: string, fence: LeaderFence | null, minGap: number): Promise<HealthCheckClaim> {
    if (this.unreachable) return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    if (fence && this.fence?.epoch !== fence.epoch) return Promise.resolve({ claimed: false, dueInMs: null });
    const last = this.lastClaim.get(provider);
    if (last !== undefined && Date.now() - last < minGap) return Promise.resolve({ claimed: false, dueInMs: last + minGap - Date.now() });
    this.lastClaim.set(provider, Date.now());
    return Promise.resolve({ claimed: true });
  }
}

/** Virtual-time minutes for the breakers: 2 passes to HALF_OPEN, then 3 probe calls and 60 s close it. */
const policy = telephonyPolicy({ halfOpenAfterPasses: 2, closeAfterMs: 60_000, closeMinProbes: 3 });

/**
 * A prober of one replica over real breakers of the library (one per provider, `keepsSessions` as given),
 * with the faces of its collaborators it uses; each check is logged with its time and the state it found.
 */
function replica(options: {
  providers: Record<string, { keepsSessions: boolean }>;
  breakers: Record<string, CircuitBreaker>;
  leadership: Leadership;
  cluster: Cluster;
  healthy: Record<string, boolean>;
  env?: Record<string, string>;
}) {
  const checks: Array<{ name: string; at: number; state: string }> = [];
  const persisted: Array<{ name: string; snapshot: BreakerSnapshot; fence: LeaderFence }> = [];
  const leadership$ = new BehaviorSubject(options.leadership);
  const lead = {
    get current() {
      return leadership$.value;
    },
    get decidesHere() {
      return leadership$.value.fence !== null || leadership$.value.scope === 'replica';
    },
    changes$: leadership$.asObservable(),
  } as unknown as BreakerLeadership;
  const breakers = {
    names: () => Object.keys(options.providers),
    get: (name: string) => options.breakers[name],
  } as unknown as ProviderBreakers;
  const registry = {
    keepsSessions: (name: string) => options.providers[name].keepsSessions,
    healthCheck: (name: string) => {
      const breaker = options.breakers[name];
      checks.push({ name, at: Date.now() - T0, state: breaker.status().state });
      const ok = options.healthy[name];
      breaker.record(ok ? { kind: 'health-pass' } : { kind: 'health-fail', reason: `${name}: connection reset on health` });
      return Promise.resolve(
        ok
          ? { ok: true, value: undefined, latencyMs: 1 }
          : { ok: false, latencyMs: 1, failure: { reason: `${name}: connection reset on health`, countsAgainstProvider: true } },
      );
    },
  } as unknown as ProviderRegistry;
  const store = {
    recordSnapshot: (name: string, snapshot: BreakerSnapshot, fence: LeaderFence) => persisted.push({ name, snapshot, fence }),
  } as unknown as BreakerStateStore;
  const config = loadConfig({
    BREAKER_HEALTH_INTERVAL_MS: String(INTERVAL),
    BREAKER_CLOSED_CHECK_INTERVAL_MS: String(CLOSED_INTERVAL),
    ...options.env,
  });
  const prober = new HealthProber(config, registry, breakers, lead, store, options.cluster as unknown as ProviderStateRepository);
  prober.onApplicationBootstrap();
  return { prober, checks, persisted, leadership$ };
}

/** Moves virtual time by `ms`, settling each check's promises at the time it runs. */
async function wait(prober: HealthProber, ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
  await prober.settled();
}

const open = (breaker: CircuitBreaker) => {
  for (let i = 0; i < 5; i++) breaker.record({ kind: 'failure', reason: 'HTTP 503' });
};

describe('HealthProber cadence', () => {
  let breakers: CircuitBreaker[] = [];
  const breaker = (): CircuitBreaker => {
    const made = new CircuitBreaker(policy);
    breakers.push(made);
    return made;
  };

  beforeEach(() => {
    jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  });
  afterEach(() => {
    for (const b of breakers) b.dispose();
    breakers = [];
    jest.useRealTimers();
  });

  it('checks a provider with sessions every BREAKER_HEALTH_INTERVAL_MS while OPEN or HALF_OPEN, and never while CLOSED', async () => {
    const cluster = new Cluster();
    cluster.fence = FENCE_A;
    const primary = breaker();
    const healthy = { primary: false };
    const { prober, checks, persisted } = replica({
      providers: { primary: { keepsSessions: true } },
      breakers: { primary },
      leadership: leading(FENCE_A),
      cluster,
      healthy,
    });
    try {
      await wait(prober, 150_000); // CLOSED: 2.5 min, no check
      expect(checks).toEqual([]);

      open(primary); // OPEN at 150 s: the first check one interval later
      await wait(prober, 3 * INTERVAL); // failing
      healthy.primary = true;
      await wait(prober, 2 * INTERVAL); // 2 passes → HALF_OPEN at 300 s
      expect(primary.status().state).toBe('HALF_OPEN');
      for (let i = 0; i < 3; i++) primary.record({ kind: 'success', probe: true }); // probe sessions: checks alone never close
      await wait(prober, 3 * INTERVAL); // one check at 330 s, then the close gate, 60 s in, closes it
      expect(primary.status().state).toBe('CLOSED');
      await wait(prober, 5 * INTERVAL); // CLOSED again: nothing
      const at = (n: number) => 150_000 + n * INTERVAL;
      expect(checks).toEqual([
        { name: 'primary', at: at(1), state: 'OPEN' },
        { name: 'primary', at: at(2), state: 'OPEN' },
        { name: 'primary', at: at(3), state: 'OPEN' },
        { name: 'primary', at: at(4), state: 'OPEN' },
        { name: 'primary', at: at(5), state: 'OPEN' },
        { name: 'primary', at: at(6), state: 'HALF_OPEN' },
      ]);
      // The leader persists the breaker after every check, under its fence: the pass count survives it.
      expect(persisted.map((p) => p.snapshot.healthPasses).slice(0, 5)).toEqual([0, 0, 0, 1, 0]);
      expect(persisted.every((p) => p.fence === FENCE_A)).toBe(true);
    } finally {
      await prober.onApplicationShutdown();
    }
  });

  it('checks a CLOSED provider without sessions every BREAKER_CLOSED_CHECK_INTERVAL_MS: dark, it opens at the 5th failed check, then the OPEN cadence', async () => {
    const cluster = new Cluster();
    cluster.fence = FENCE_A;
    const [twilio, sim] = [breaker(), breaker()];
    const healthy = { twilio: true, sim: true };
    const { prober, checks } = replica({
      providers: { twilio: { keepsSessions: false }, sim: { keepsSessions: true } },
      breakers: { twilio, sim },
      leadership: leading(FENCE_A),
      cluster,
      healthy,
    });
    try {
      await wait(prober, 3 * CLOSED_INTERVAL); // passing: CLOSED, nothing counted
      expect(twilio.status()).toMatchObject({ state: 'CLOSED', consecutiveFailures: 0 });
      healthy.twilio = false; // gone dark: no traffic, no webhook, only the checks see it
      await wait(prober, 4 * CLOSED_INTERVAL);
      expect(twilio.status()).toMatchObject({ state: 'CLOSED', consecutiveFailures: 4 });
      await wait(prober, CLOSED_INTERVAL);
      expect(twilio.status()).toMatchObject({
        state: 'OPEN',
        reason: '5 consecutive failures',
        lastError: 'twilio: connection reset on health',
      });
      await wait(prober, 2 * INTERVAL);
      expect(checks.map(({ name, at, state }) => `${name} ${at / 1_000} ${state}`)).toEqual([
        ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => `twilio ${(n * CLOSED_INTERVAL) / 1_000} CLOSED`),
        'twilio 190 OPEN',
        'twilio 220 OPEN',
      ]);
    } finally {
      await prober.onApplicationShutdown();
    }
  });

  it('checks no CLOSED provider with BREAKER_CLOSED_CHECK_INTERVAL_MS=0', async () => {
    const cluster = new Cluster();
    cluster.fence = FENCE_A;
    const twilio = breaker();
    const { prober, checks } = replica({
      providers: { twilio: { keepsSessions: false } },
      breakers: { twilio },
      leadership: leading(FENCE_A),
      cluster,
      healthy: { twilio: false },
      env: { BREAKER_CLOSED_CHECK_INTERVAL_MS: '0' },
    });
    try {
      await wait(prober, 10 * CLOSED_INTERVAL);
      expect(checks).toEqual([]);
      open(twilio);
      await wait(prober, INTERVAL);
      expect(checks).toEqual([{ name: 'twilio', at: 10 * CLOSED_INTERVAL + INTERVAL, state: 'OPEN' }]);
    } finally {
      await prober.onApplicationShutdown();
    }
  });

  it('checks nothing on a replica that follows the leader, even with a breaker OPEN', async () => {
    const primary = breaker();
    const { prober, checks, persisted } = replica({
      providers: { primary: { keepsSessions: false } },
      breakers: { primary },
      leadership: following('replica-b'),
      cluster: new Cluster(),
      healthy: { primary: false },
    });
    try {
      open(primary);
      await wait(prober, 4 * INTERVAL);
      expect(checks).toEqual([]);
      expect(persisted).toEqual([]);
    } finally {
      await prober.onApplicationShutdown();
    }
  });

  it('keeps one check per interval across a change of leader: the new leader’s first comes an interval after the cluster’s last', async () => {
    const cluster = new Cluster();
    cluster.fence = FENCE_A;
    // Each replica's copy of the one OPEN breaker (the follower adopts the leader's state).
    const [onA, onB] = [breaker(), breaker()];
    open(onA);
    open(onB);
    const common = { providers: { primary: { keepsSessions: true } }, cluster, healthy: { primary: false } };
    const a = replica({ ...common, breakers: { primary: onA }, leadership: leading(FENCE_A) });
    // B started 25 s later: its own timers would run 25 s out of step with A's.
    await wait(a.prober, 25_000);
    const b = replica({ ...common, breakers: { primary: onB }, leadership: following('replica-a') });
    try {
      await wait(a.prober, 45_000); // A checks at 30 s and 60 s
      // At 70 s A is gone and B takes over (a clean handover: at once).
      a.leadership$.next(following('replica-b'));
      cluster.fence = FENCE_B;
      b.leadership$.next(leading(FENCE_B));
      await wait(b.prober, 2 * INTERVAL);
      const all = [...a.checks.map((c) => `A ${c.at / 1_000}`), ...b.checks.map((c) => `B ${c.at / 1_000}`)];
      // Not at 70 s (B's takeover) nor 85 s (B's own step): 90 s, an interval after A's last.
      expect(all).toEqual(['A 30', 'A 60', 'B 90', 'B 120']);
    } finally {
      await a.prober.onApplicationShutdown();
      await b.prober.onApplicationShutdown();
    }
  });

  it('on a replica that believes itself cut off while the database answers (a lease claim that came late), keeps out of the leader’s interval', async () => {
    const cluster = new Cluster();
    cluster.fence = FENCE_A;
    const [onA, onB] = [breaker(), breaker()];
    open(onA);
    open(onB);
    const common = { providers: { primary: { keepsSessions: true } }, cluster, healthy: { primary: false } };
    const a = replica({ ...common, breakers: { primary: onA }, leadership: leading(FENCE_A) });
    await wait(a.prober, 25_000);
    const b = replica({ ...common, breakers: { primary: onB }, leadership: following('replica-a') });
    try {
      await wait(a.prober, 10_000); // A checks at 30 s
      // At 35 s B's lease claim times out: it decides alone, but the cluster's last check is 5 s old.
      b.leadership$.next({ scope: 'replica', leader: null, fence: null });
      await wait(b.prober, 24_999); // 59.999 s: one millisecond short of A's next
      expect(b.checks).toEqual([]);
      await wait(b.prober, 1);
      await a.prober.settled();
      const all = [...a.checks.map((c) => `A ${c.at / 1_000}`), ...b.checks.map((c) => `B ${c.at / 1_000}`)].sort();
      // At 60 s one of the two claims the check, never both.
      expect(all).toHaveLength(2);
      expect(all[0]).toBe('A 30');
      expect(all[1]).toMatch(/^[AB] 60$/);
    } finally {
      await a.prober.onApplicationShutdown();
      await b.prober.onApplicationShutdown();
    }
  });

  it('on a replica really cut off (the database does not answer), checks alone every interval', async () => {
    const cluster = new Cluster();
    cluster.unreachable = true;
    const primary = breaker();
    open(primary);
    const { prober, checks } = replica({
      providers: { primary: { keepsSessions: true } },
      breakers: { primary },
      leadership: { scope: 'replica', leader: null, fence: null },
      cluster,
      healthy: { primary: false },
    });
    try {
      await wait(prober, 2 * INTERVAL);
      expect(checks.map((c) => c.at / 1_000)).toEqual([30, 60]);
    } finally {
      await prober.onApplicationShutdown();
    }
  });

  it('checks alone only once cut off for a whole interval: deciding alone for less, with the database not answering, it does not check', async () => {
    const cluster = new Cluster();
    cluster.fence = FENCE_A;
    const primary = breaker();
    open(primary);
    const { prober, checks, leadership$ } = replica({
      providers: { primary: { keepsSessions: true } },
      breakers: { primary },
      leadership: following('replica-a'),
      cluster,
      healthy: { primary: false },
    });
    try {
      await wait(prober, 40_000);
      // At 40 s one lease claim fails (a connection lost once): alone, and the database does not answer either.
      cluster.unreachable = true;
      leadership$.next({ scope: 'replica', leader: null, fence: null });
      await wait(prober, INTERVAL - 1); // 69.999 s: alone one millisecond short of an interval
      expect(checks).toEqual([]);
      await wait(prober, 1); // 70 s: a whole interval alone
      expect(checks.map((c) => c.at / 1_000)).toEqual([70]);
      // Back in the cluster before its next: the leader's cadence again, none of its own.
      cluster.unreachable = false;
      leadership$.next(following('replica-a'));
      await wait(prober, 2 * INTERVAL);
      expect(checks.map((c) => c.at / 1_000)).toEqual([70]);
    } finally {
      await prober.onApplicationShutdown();
    }
  });

  it('checks on demand (tick) whatever the cadence, then carries on an interval after it', async () => {
    const cluster = new Cluster();
    cluster.fence = FENCE_A;
    const primary = breaker();
    open(primary);
    const { prober, checks } = replica({
      providers: { primary: { keepsSessions: true } },
      breakers: { primary },
      leadership: leading(FENCE_A),
      cluster,
      healthy: { primary: false },
    });
    try {
      await wait(prober, 10_000);
      await prober.tick();
      await prober.tick();
      await wait(prober, INTERVAL);
      expect(checks.map((c) => c.at / 1_000)).toEqual([10, 10, 40]);
    } finally {
      await prober.onApplicationShutdown();
    }
  });
});
