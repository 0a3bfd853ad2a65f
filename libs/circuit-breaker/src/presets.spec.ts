/**
 * Each preset against its document, sentence by sentence, in virtual time (1 frame = 1 ms).
 * Outcome keys: s success, f failure, l slow success, p health check passed, x health check failed.
 */
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { CircuitBreaker, telephonyPolicy, type Admission, type BreakerPolicy, type Outcome } from './index';
import { providerFailoverPolicy } from './testing/policies';
import { burst, every, timeline } from './testing/timeline';

const OUTCOMES: Record<string, Outcome> = {
  s: { kind: 'success', durationMs: 120 },
  f: { kind: 'failure', reason: 'HTTP 503' },
  l: { kind: 'success', durationMs: 2_500 },
  p: { kind: 'health-pass' },
  x: { kind: 'health-fail', reason: 'health check refused' },
};
const STATES = { c: 'CLOSED', o: 'OPEN', h: 'HALF_OPEN' };

const newScheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

function expectStates(policy: BreakerPolicy, outcomes: string, states: string, options: { random?: () => number } = {}): void {
  const scheduler = newScheduler();
  scheduler.run(({ cold, expectObservable }) => {
    const breaker = new CircuitBreaker(policy, { scheduler, ...options });
    expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe(states, STATES);
    breaker.connect(cold(outcomes, OUTCOMES));
  });
}

/** Runs `steps` at their times against one breaker; returns what `admit()` said at each `admit` step. */
function script(policy: BreakerPolicy, steps: Array<[number, string]>, random?: () => number): string[] {
  const scheduler = newScheduler();
  const said: string[] = [];
  const show = (a: Admission): string => (a.admitted ? (a.probe ? 'probe' : 'admitted') : 'refused');
  scheduler.run(() => {
    const breaker = new CircuitBreaker(policy, { scheduler, random });
    for (const [at, keys] of steps) {
      scheduler.schedule(() => {
        for (const key of keys) {
          if (key === 'a') said.push(`${at}:${show(breaker.admit())}`);
          else if (key === 'S') said.push(`${at}:${breaker.status().state}`);
          else
            breaker.record({ ...OUTCOMES[key], ...(key === 's' || key === 'f' ? { probe: breaker.status().state === 'HALF_OPEN' } : {}) });
        }
      }, at);
    }
  });
  return said;
}

describe('telephony default (docs/design.md#provider-breaker)', () => {
  const policy = telephonyPolicy();

  it('has the documented defaults', () => {
    expect(policy).toEqual({
      trip: [
        { kind: 'consecutive-failures', failures: 5 },
        { kind: 'window-error-rate', windowMs: 120_000, errorRate: 0.1, minCalls: 10, buckets: 120 },
      ],
      recovery: { kind: 'health-checks', passes: 5 },
      halfOpen: { kind: 'share', share: 0.1 },
      close: { kind: 'success-rate', rate: 0.95, durationMs: 300_000, minProbes: 10 },
      onHalfOpenFailure: 'reopen',
      healthFailuresTrip: true,
      slowCallMs: 2_000,
    });
  });

  it('takes each BREAKER_* setting as an override', () => {
    expect(telephonyPolicy({ consecutiveFailures: 3, windowMinCalls: 1, halfOpenProbeShare: 0.25, closeAfterMs: 60_000 })).toMatchObject({
      trip: [{ failures: 3 }, { minCalls: 1 }],
      halfOpen: { share: 0.25 },
      close: { durationMs: 60_000 },
    });
  });

  it('trips CLOSED → OPEN on 5 consecutive call-setup failures', () => {
    expectStates(policy, 'ffff', 'c');
    expectStates(policy, 'fffff', 'c 3ms o');
  });

  it('…or on an error rate greater than 10 % over a sliding 2-minute window of at least 10 calls', () => {
    expectStates(policy, 'sssssssssfsssssssssf', 'c'); // exactly 10 %
    expectStates(policy, 'sssssssssfssssssssf', 'c 17ms o'); // 2 in 19
  });

  it.each([
    // At 119 s the failure at t = 0 is still in the window: 2 failures in 11 calls trip.
    [119_000, ['119000:OPEN']],
    // At 121 s it slid out: 1 in 10 (exactly 10 %) holds; one more failure trips, because the rest of the
    // window (the successes at 10…90 s) still counts. A window that restarted at 120 s would hold 2 calls.
    [121_000, ['121000:CLOSED', '121000:OPEN']],
  ])('the 2-minute window slides: an outcome at t = 0 still counts at %d ms…', (at, expected) => {
    const successes = Array.from({ length: 9 }, (_, i) => [(i + 1) * 10_000, 's'] as [number, string]);
    const steps: Array<[number, string]> = [[0, 'f'], ...successes, [at, 'fSfS']];
    expect(script(policy, steps).slice(0, expected.length)).toEqual(expected);
  });

  it('in OPEN, moves to HALF_OPEN after 5 consecutive passing health checks, every 30 s; a failing check resets the count', () => {
    const checks = [...every(30_000, 4, 'p', 30_000), [150_000, 'x'] as [number, string], ...every(30_000, 5, 'p', 180_000)];
    expectStates(
      policy,
      timeline([...burst(0, 'fffff'), ...checks]),
      timeline([
        [0, 'c'],
        [4, 'o'],
        [300_000, 'h'],
      ]),
    );
  });

  it('in HALF_OPEN, sends every 10th new session to the primary as a probe; the rest go to the failover', () => {
    const said = script(policy, [
      [0, 'fffffppppp'],
      [1, 'aaaaaaaaaaaaaaaaaaaa'],
    ]);
    expect(said.filter((s) => s.endsWith('probe'))).toHaveLength(2);
    expect([said[9], said[19]]).toEqual(['1:probe', '1:probe']);
  });

  it('goes back HALF_OPEN → OPEN on any failure during the probe: a probe session…', () => {
    expectStates(policy, 'fffffpppppssf', 'c 3ms o 4ms h 2ms o');
  });

  it('…or a health check', () => {
    expectStates(policy, 'fffffpppppppx', 'c 3ms o 4ms h 2ms o');
  });

  it('closes HALF_OPEN → CLOSED when probe traffic held > 95 % success over 5 minutes with at least 10 probes', () => {
    // HALF_OPEN at 9 ms; 10 probe calls at 45 s, health checks every 30 s beside them; closes at exactly 9 + 300 000 ms.
    const outcomes = timeline([...burst(0, 'fffffppppp'), ...burst(45_000, 'ssssssssss'), ...every(30_000, 10, 'p', 30_000)]);
    expectStates(
      policy,
      outcomes,
      timeline([
        [0, 'c'],
        [4, 'o'],
        [9, 'h'],
        [300_009, 'c'],
      ]),
    );
  });

  it('never closes on health checks alone: 20 passing checks over 10 minutes, no probe call, stay HALF_OPEN', () => {
    expectStates(policy, timeline([...burst(0, 'fffffppppp'), ...every(30_000, 20, 'p', 30_000)]), 'c 3ms o 4ms h');
  });

  it('counts a failing health check while CLOSED as a call-setup failure: the 5th in a row trips, a success between resets', () => {
    expectStates(policy, 'xxxx', 'c');
    expectStates(policy, 'xxxxx', 'c 3ms o');
    expectStates(policy, 'xxsxxx', 'c');
    expectStates(policy, 'ffxff', 'c 3ms o');
  });

  it('…and counts it in the window; a passing check while CLOSED counts for nothing (it proves the API, not the traffic)', () => {
    // 9 successes, 1 failed call, a failing check: 2 in 11 > 10 %. Passing checks neither reset the
    // consecutive count nor add a success to the window.
    expectStates(policy, 'sssssssssfx', 'c 9ms o');
    expectStates(policy, 'ffffpf', 'c 4ms o');
    expectStates(policy, 'sssssssssfpx', 'c 10ms o');
  });

  it('does not re-open on a probe slower than BREAKER_SLOW_CALL_MS, but does not count it as a success', () => {
    const outcomes = timeline([...burst(0, 'fffffppppp'), ...burst(10, 'lllll'), ...every(30_000, 10, 'p', 30_000)]);
    expectStates(policy, outcomes, 'c 3ms o 4ms h'); // 10 of 15 = 67 %: stays HALF_OPEN, never OPEN
  });

  it('starts each state with fresh counters: a closed breaker has forgotten the failures that opened it', () => {
    const outcomes = timeline([
      ...burst(0, 'fffffppppp'),
      ...burst(45_000, 'ssssssssss'),
      ...every(30_000, 10, 'p', 30_000),
      ...burst(400_000, 'ffff'),
    ]);
    expectStates(
      policy,
      outcomes,
      timeline([
        [0, 'c'],
        [4, 'o'],
        [9, 'h'],
        [300_009, 'c'],
      ]),
    ); // 4 new failures do not trip
  });

  it('reports openedAt only while OPEN, and the failure that tripped it as lastError', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold }) => {
      const breaker = new CircuitBreaker(policy, { scheduler });
      breaker.connect(cold('fffffppppp', OUTCOMES));
      scheduler.schedule(() => expect(breaker.status()).toMatchObject({ state: 'OPEN', openedAt: 4, lastError: 'HTTP 503' }), 5);
      scheduler.schedule(() => expect(breaker.status()).toMatchObject({ state: 'HALF_OPEN', openedAt: null, lastError: 'HTTP 503' }), 10);
    });
  });
});

describe('provider failover breaker', () => {
  const policy = providerFailoverPolicy();

  it('opens when more than 10 attempts have been recorded and the failure ratio has reached 0.2', () => {
    expectStates(policy, 'ssssssssff', 'c'); // 10 attempts, 20 %: not more than 10
    expectStates(policy, 'ssssssssfff', 'c 9ms o 29999ms h'); // 11th attempt, 27 %
    expectStates(policy, 'ssssssssssssfff', 'c 13ms o 29999ms h'); // exactly 0.2 at 15 attempts
    expectStates(policy, 'sssssssssssssfff', 'c'); // 3 in 16 is under 0.2
  });

  it('does not let a single early failure pull a healthy provider out of rotation (the ten-attempt floor)', () => {
    expectStates(policy, 'fssssssssssssss', 'c');
  });

  it('holds an open provider out for the 30-second cool-off, refusing calls without a round trip', () => {
    const said = script(policy, [
      [0, 'fffffffffff'],
      [29_999, 'a'],
      [30_000, 'aa'],
    ]);
    expect(said).toEqual(['29999:refused', '30000:probe', '30000:refused']);
  });

  it('lets the next request after the cool-off through with the counters reset: a success closes the breaker', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const breaker = new CircuitBreaker(policy, { scheduler });
      for (let i = 0; i < 11; i++) breaker.record(OUTCOMES.f);
      scheduler.schedule(() => {
        expect(breaker.admit()).toEqual({ admitted: true, probe: true });
        expect(breaker.admit().admitted).toBe(false); // only the next request
        breaker.record({ kind: 'success', probe: true });
        expect(breaker.status()).toMatchObject({ state: 'CLOSED', attempts: 0, failures: 0, opens: 0 });
      }, 30_000);
    });
  });

  it('…a failure re-opens it for another cool-off of the same length', () => {
    const said = script(policy, [
      [0, 'fffffffffff'],
      [30_000, 'af'],
      [59_999, 'a'],
      [60_000, 'a'],
    ]);
    expect(said).toEqual(['30000:probe', '59999:refused', '60000:probe']);
  });

  it('counts a rejection as a failure: a 200 without a message id', async () => {
    const breaker = new CircuitBreaker(providerFailoverPolicy({ minAttempts: 0, thresholdRatio: 1 }), { scheduler: newScheduler() });
    const send = async (): Promise<{ messageId?: string }> => ({});
    await expect(
      breaker.execute(async () => {
        const answer = await send();
        if (answer.messageId === undefined) throw new Error('rejected: no message_id in a 200');
        return answer.messageId;
      }),
    ).rejects.toThrow('rejected');
    expect(breaker.status()).toMatchObject({ state: 'OPEN', lastError: 'rejected: no message_id in a 200' });
  });

  it('does not count an error the caller classifies as not a provider failure (a 4xx for a bad number)', async () => {
    const breaker = new CircuitBreaker(providerFailoverPolicy({ minAttempts: 0, thresholdRatio: 1 }), { scheduler: newScheduler() });
    const invalidNumber = Object.assign(new Error('invalid number'), { status: 400 });
    const isProviderFailure = (e: unknown): boolean => !(e instanceof Error && 'status' in e && e.status === 400);
    await expect(breaker.execute(() => Promise.reject(invalidNumber), isProviderFailure)).rejects.toBe(invalidNumber);
    expect(breaker.status()).toMatchObject({ state: 'CLOSED', attempts: 1, failures: 0 });
  });
});
