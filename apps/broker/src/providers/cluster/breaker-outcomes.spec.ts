/**
 * Where an outcome goes (docs/operations.md), into the library's real breakers, in virtual time (Jest's fake
 * timers drive the batch timer and the breakers' clock). Replicas are wired by a stand-in for NOTIFY that
 * hands each batch to every other replica. Every replica counts the cluster's outcomes; only the leader's
 * breakers decide, the others follow; a replica that takes over decides at once on those live counts, so a
 * leader change in CLOSED forgets neither the consecutive count nor the window; a replica cut off from the
 * database decides alone.
 */
import { jest } from '@jest/globals';
import { BehaviorSubject } from 'rxjs';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../config';
import type { ChannelHandler, ListenClient } from '../../database/listen-client';
import { ProviderBreakers, systemBreakerScheduler } from '../provider-breakers';
import { ProviderStateRepository } from '../provider-state.repository';
import type { ProviderAdapters } from '../provider-adapters';
import type { BreakerLeadership, Leadership } from './breaker-leadership';
import { BREAKER_OUTCOME_CHANNEL, BreakerOutcomes } from './breaker-outcomes';

const BATCH_MS = 5;
const config = loadConfig({ BREAKER_OUTCOME_BATCH_MS: String(BATCH_MS) });
const FAILURE = { kind: 'failure', reason: 'primary: HTTP 503', probe: false } as const;
const SUCCESS = { kind: 'success', durationMs: 10, probe: false } as const;
const T0 = Date.UTC(2026, 6, 15, 12, 0, 0);

const leads = (name: string, epoch: number): Leadership => ({ scope: 'cluster', leader: name, fence: { holder: name, epoch } });
const follows = (leader: string): Leadership => ({ scope: 'cluster', leader, fence: null });
const CUT_OFF: Leadership = { scope: 'replica', leader: null, fence: null };

type Replica = ReturnType<typeof replica>;

/** NOTIFY on the outcome channel: each payload reaches every replica listening, the sender too (it skips its own). */
class Bus {
  readonly replicas: Array<{ name: string; deliver(payload: string): void }> = [];
  sent = 0;
  /** A replica that no longer hears or is heard (killed). */
  readonly gone = new Set<string>();

  send(from: string, payload: string): Promise<void> {
    if (this.gone.has(from)) return Promise.reject(new Error('connection terminated'));
    this.sent += 1;
    for (const r of this.replicas) if (!this.gone.has(r.name)) r.deliver(payload);
    return Promise.resolve();
  }
}

/** One replica: its breakers, its outcome router and its LISTEN handler, on the bus. */
function replica(name: string, leadership: Leadership, bus: Bus, send?: (payload: string) => Promise<void>) {
  const handlers = new Map<string, ChannelHandler>();
  const listener = { subscribe: (channel: string, handler: ChannelHandler) => (handlers.set(channel, handler), () => undefined) };
  const role = new BehaviorSubject(leadership);
  const state = { unreachable: 0 };
  const lead = {
    replica: name,
    get current() {
      return role.value;
    },
    get decidesHere() {
      return role.value.fence !== null || role.value.scope === 'replica';
    },
    changes$: role.asObservable(),
    noteUnreachable: () => (state.unreachable += 1),
  } as unknown as BreakerLeadership;
  const breakers = new ProviderBreakers(
    config,
    { names: ['primary', 'failover'] } as unknown as ProviderAdapters,
    systemBreakerScheduler(),
  );
  const dataSource = {
    query: (_: string, [, payload]: [string, string]) => (send ? send(payload) : bus.send(name, payload)),
  } as unknown as DataSource;
  const outcomes = new BreakerOutcomes(
    config,
    new ProviderStateRepository(dataSource),
    listener as unknown as ListenClient,
    breakers,
    lead,
    systemBreakerScheduler(),
  );
  outcomes.onApplicationBootstrap();
  const r = {
    name,
    breakers,
    outcomes,
    role,
    state,
    primary: () => breakers.get('primary').status(),
    deliver: (payload: string) => handlers.get(BREAKER_OUTCOME_CHANNEL)!(payload),
  };
  bus.replicas.push(r);
  return r;
}

/** Three replicas, A leading; `at(ms, fn)` runs fn at that virtual time, batches delivered. */
function cluster() {
  const bus = new Bus();
  const [a, b, c] = [replica('a', leads('a', 1), bus), replica('b', follows('a'), bus), replica('c', follows('a'), bus)];
  const at = async (ms: number, fn: () => void = () => undefined) => {
    await jest.advanceTimersByTimeAsync(Math.max(0, T0 + ms - Date.now()));
    fn();
    await jest.advanceTimersByTimeAsync(BATCH_MS + 1);
  };
  /** A dies: nothing more from or to it; B takes the lease in a new term, C follows B. */
  const killA = () => {
    bus.gone.add('a');
    b.role.next(leads('b', 2));
    c.role.next(follows('b'));
  };
  return { bus, a, b, c, at, killA };
}

describe('BreakerOutcomes', () => {
  let replicas: Replica[] = [];

  beforeEach(() => {
    jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  });
  afterEach(async () => {
    for (const r of replicas) await r.outcomes.onApplicationShutdown();
    replicas = [];
    jest.useRealTimers();
  });

  it('counts the cluster’s outcomes on every replica; only the leader trips, at the 5th failure whichever replicas saw them', async () => {
    const { bus, a, b, c, at } = cluster();
    replicas = [a, b, c];
    await at(0, () => {
      a.outcomes.record('primary', FAILURE);
      a.outcomes.record('primary', FAILURE);
      b.outcomes.record('primary', FAILURE);
      b.outcomes.record('primary', FAILURE);
    });
    expect([a, b, c].map((r) => r.primary().consecutiveFailures)).toEqual([4, 4, 4]);
    expect(bus.sent).toBe(2); // one batch from A, one from B
    await at(10, () => c.outcomes.record('primary', FAILURE));
    expect(a.primary()).toMatchObject({ state: 'OPEN', reason: '5 consecutive failures' });
    // The followers counted the 5th too, and wait for the leader's decision (adopted from the database).
    expect([b, c].map((r) => [r.primary().state, r.primary().consecutiveFailures])).toEqual([
      ['CLOSED', 5],
      ['CLOSED', 5],
    ]);
  });

  it('does not count a replica’s own batch twice when it comes back to it', async () => {
    const { a, b, c, at } = cluster();
    replicas = [a, b, c];
    await at(0, () => b.outcomes.record('primary', FAILURE)); // the bus hands B's batch to B too
    expect([a, b, c].map((r) => r.primary().consecutiveFailures)).toEqual([1, 1, 1]);
  });

  it('keeps the consecutive count across a leader change in CLOSED: 4 failures, the leader dies, the new leader opens on the 5th', async () => {
    const { a, b, c, at, killA } = cluster();
    replicas = [a, b, c];
    await at(0, () => {
      a.outcomes.record('primary', FAILURE);
      c.outcomes.record('primary', FAILURE);
      a.outcomes.record('primary', FAILURE);
      b.outcomes.record('primary', FAILURE);
    });
    await at(1_000, killA);
    expect(b.primary()).toMatchObject({ state: 'CLOSED', consecutiveFailures: 4 });
    await at(2_000, () => c.outcomes.record('primary', FAILURE)); // seen by C, decided by B
    expect(b.primary()).toMatchObject({ state: 'OPEN', reason: '5 consecutive failures' });
  });

  it('opens on taking over when the counts already call for it: 5 failures reached the followers, not the dead leader', async () => {
    const { bus, a, b, c, at, killA } = cluster();
    replicas = [a, b, c];
    await at(0, () => {
      bus.gone.add('a'); // A dies; until its lease runs out, B and C still follow it
      for (let i = 0; i < 3; i++) b.outcomes.record('primary', FAILURE);
      for (let i = 0; i < 2; i++) c.outcomes.record('primary', FAILURE);
    });
    expect([b, c].map((r) => [r.primary().state, r.primary().consecutiveFailures])).toEqual([
      ['CLOSED', 5],
      ['CLOSED', 5],
    ]);
    await at(2_500, killA); // B's takeover
    expect(b.primary()).toMatchObject({ state: 'OPEN', reason: '5 consecutive failures' });
    expect(c.primary().state).toBe('CLOSED'); // C follows B, and adopts what B persists
  });

  it.each([
    // The failure at 0 s is in the 2-minute window at 119 s: 2 failures in 11 calls trip the new leader…
    [119_000, 'OPEN'],
    // …at 121 s it slid out: 1 in 10 (exactly 10 %) does not.
    [121_000, 'CLOSED'],
  ])('keeps the window across a leader change in CLOSED: the 2nd failure at %d ms leaves the new leader %s', async (when, state) => {
    const { a, b, c, at, killA } = cluster();
    replicas = [a, b, c];
    await at(0, () => c.outcomes.record('primary', FAILURE));
    for (let i = 1; i <= 9; i++) await at(i * 10_000, () => [a, b, c][i % 3].outcomes.record('primary', SUCCESS));
    await at(100_000, killA);
    expect(b.primary()).toMatchObject({ state: 'CLOSED', windowCalls: 10, windowFailures: 1 });
    await at(when, () => a.outcomes.record('primary', FAILURE)); // A is dead: lost with it
    await at(when, () => c.outcomes.record('primary', FAILURE));
    expect(b.primary().state).toBe(state);
  });

  it('decides on its own breaker when cut off, on everything it counted, the outcomes its failed NOTIFY carried among them', async () => {
    const bus = new Bus();
    const cut = replica('c', follows('a'), bus, () => Promise.reject(new Error('connection terminated')));
    replicas = [cut];
    for (let i = 0; i < 2; i++) cut.outcomes.record('primary', FAILURE);
    await jest.advanceTimersByTimeAsync(BATCH_MS + 1);
    // The NOTIFY failed: the replica reports itself cut off; the two were counted here already.
    expect(cut.state.unreachable).toBe(1);
    expect(cut.primary().consecutiveFailures).toBe(2);
    cut.role.next(CUT_OFF);
    for (let i = 0; i < 2; i++) cut.outcomes.record('primary', FAILURE);
    expect(cut.primary().state).toBe('CLOSED'); // 4: not yet
    cut.outcomes.record('primary', FAILURE);
    expect(cut.primary().state).toBe('OPEN'); // the 5th trips, here
  });
});
