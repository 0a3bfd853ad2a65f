import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { CircuitBreaker, telephonyPolicy, type BreakerSnapshot } from './index';
import { coolOffPolicy, providerFailoverPolicy } from './testing/policies';

const newScheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const fail = { kind: 'failure', reason: 'HTTP 503' } as const;
const STATES = { c: 'CLOSED', o: 'OPEN', h: 'HALF_OPEN' };
const roundTrip = (breaker: CircuitBreaker): BreakerSnapshot => JSON.parse(JSON.stringify(breaker.toJSON())) as BreakerSnapshot;

describe('toJSON / fromJSON', () => {
  it('is plain, versioned JSON', () => {
    const breaker = new CircuitBreaker(telephonyPolicy(), { scheduler: newScheduler() });
    breaker.record(fail);
    const snapshot = breaker.toJSON();
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot).toMatchObject({ version: 1, state: 'CLOSED', consecutiveFailures: 1 });
  });

  it('carries the window across a restart: the restored breaker trips as the old one would have', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const before = new CircuitBreaker(telephonyPolicy({ consecutiveFailures: 100 }), { scheduler });
      for (let i = 0; i < 9; i++) before.record(i === 0 ? fail : { kind: 'success' }); // 1 failure in 9 calls
      const after = CircuitBreaker.fromJSON(before.policy, roundTrip(before), { scheduler });
      before.dispose();
      expect(after.status()).toMatchObject({ windowCalls: 9, windowFailures: 1 });
      expectObservable(after.state$.pipe(map((s) => s.state))).toBe('c 9ms o', STATES);
      scheduler.schedule(() => after.record(fail), 10); // 2 in 10
    });
  });

  it('keeps openedAt of an OPEN breaker and re-arms its cool-off from the snapshot times', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const before = new CircuitBreaker(providerFailoverPolicy({ minAttempts: 0, thresholdRatio: 1 }), { scheduler });
      before.record(fail); // OPEN at 0, trial due at 30 000
      let after!: CircuitBreaker;
      scheduler.schedule(() => {
        const snapshot = roundTrip(before);
        before.dispose();
        after = CircuitBreaker.fromJSON(before.policy, snapshot, { scheduler }); // restarted 10 s later
        expect(after.status()).toMatchObject({ state: 'OPEN', openedAt: 0, retryAt: 30_000 });
        expectObservable(after.state$.pipe(map((s) => s.state))).toBe('10000ms o 19999ms h', STATES); // frames are absolute
      }, 10_000);
    });
  });

  it('lets the trial through at once when the cool-off ran out while the process was down', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const before = new CircuitBreaker(coolOffPolicy(), { scheduler });
      for (let i = 0; i < 3; i++) before.record(fail);
      const snapshot = roundTrip(before);
      before.dispose();
      scheduler.schedule(() => {
        const after = CircuitBreaker.fromJSON(coolOffPolicy(), snapshot, { scheduler });
        expect(after.admit()).toEqual({ admitted: true, probe: true });
      }, 600_000);
    });
  });

  it('re-arms the close gate of a HALF_OPEN breaker relative to when it half-opened', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const before = new CircuitBreaker(telephonyPolicy(), { scheduler });
      for (let i = 0; i < 5; i++) before.record(fail);
      for (let i = 0; i < 5; i++) before.record({ kind: 'health-pass' }); // HALF_OPEN at 0
      for (let i = 0; i < 10; i++) before.record({ kind: 'success', probe: true });
      scheduler.schedule(() => {
        const snapshot = roundTrip(before);
        before.dispose();
        const after = CircuitBreaker.fromJSON(before.policy, snapshot, { scheduler });
        expectObservable(after.state$.pipe(map((s) => s.state))).toBe('100000ms h 199999ms c', STATES); // closes 5 min after it half-opened
      }, 100_000);
    });
  });

  it('carries who forced the state across a restart; a snapshot from before forcing reads as not forced', () => {
    const scheduler = newScheduler();
    const before = new CircuitBreaker(telephonyPolicy(), { scheduler });
    before.force('OPEN', 'vendor outage', 'admin');
    const after = CircuitBreaker.fromJSON(telephonyPolicy(), roundTrip(before), { scheduler });
    expect(after.status()).toMatchObject({ state: 'OPEN', reason: 'vendor outage', forcedBy: 'admin' });
    const { forcedBy: _dropped, ...older } = roundTrip(before);
    expect(CircuitBreaker.fromJSON(telephonyPolicy(), older, { scheduler }).status().forcedBy).toBeNull();
    expect(() => CircuitBreaker.fromJSON(telephonyPolicy(), { ...older, forcedBy: 7 as unknown as string }, { scheduler })).toThrow(
      'breaker snapshot forcedBy must be a string or null',
    );
  });

  it('reads a snapshot written before trafficProbes was counted as 0 of them', () => {
    const scheduler = newScheduler();
    const before = new CircuitBreaker(telephonyPolicy(), { scheduler });
    for (let i = 0; i < 5; i++) before.record(fail);
    for (let i = 0; i < 6; i++) before.record({ kind: 'health-pass' }); // HALF_OPEN, one probe (a check)
    const { trafficProbes: _dropped, ...older } = roundTrip(before);
    const after = CircuitBreaker.fromJSON(telephonyPolicy(), older, { scheduler });
    expect(after.status()).toMatchObject({ state: 'HALF_OPEN', probes: 1, trafficProbes: 0 });
    expect(() => CircuitBreaker.fromJSON(telephonyPolicy(), { ...older, trafficProbes: 'x' as unknown as number })).toThrow(
      'breaker snapshot trafficProbes must be a finite number',
    );
  });

  it('rejects a snapshot of an unknown version', () => {
    const snapshot = { ...new CircuitBreaker(telephonyPolicy()).toJSON(), version: 2 } as unknown as BreakerSnapshot;
    expect(() => CircuitBreaker.fromJSON(telephonyPolicy(), snapshot)).toThrow('unsupported breaker snapshot version 2');
  });

  it('starts with an empty window when the restored policy has another window shape', () => {
    const before = new CircuitBreaker(telephonyPolicy(), { scheduler: newScheduler() });
    before.record(fail);
    const after = CircuitBreaker.fromJSON(telephonyPolicy({ windowMs: 60_000 }), roundTrip(before), { scheduler: newScheduler() });
    expect(after.status()).toMatchObject({ windowCalls: 0, consecutiveFailures: 1 });
  });
});
