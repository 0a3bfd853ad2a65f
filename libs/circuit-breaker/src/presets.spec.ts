/**
 * Each preset against its document, sentence by sentence, in virtual time (1 frame = 1 ms).
 * Outcome keys: s success, f failure, l slow success, p health check passed, x health check failed.
 */
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  BreakerRejectedError,
  BreakerTimeoutError,
  CircuitBreaker,
  callbackUrlPolicy,
  endpointDownPolicy,
  providerFailoverPolicy,
  telephonyPolicy,
  type Admission,
  type BreakerPolicy,
  type Outcome,
} from './index';
import { burst, every, timeline } from './testing/timeline';

const OUTCOMES: Record<string, Outcome> = {
  s: { kind: 'success', durationMs: 120 },
  f: { kind: 'failure', reason: 'HTTP 503' },
  l: { kind: 'success', durationMs: 2_500 },
  p: { kind: 'health-pass' },
  x: { kind: 'health-fail', reason: 'health check refused' },
};
const STATES = { c: 'CLOSED', o: 'OPEN', h: 'HALF_OPEN' };
const MIN = 60_000;

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

describe('callback URL breaker', () => {
  const policy = callbackUrlPolicy();
  const noJitter = (): number => 0.5;

  it('opens when consecutive failures reach max failures (5)', () => {
    expectStates(policy, 'ffff', 'c');
    expectStates(policy, 'fffff', 'c 3ms o 59999ms h', { random: noJitter });
  });

  it('skips callbacks while Open: Belio does not contact your endpoint', async () => {
    const breaker = new CircuitBreaker(policy, { scheduler: newScheduler(), random: noJitter });
    for (let i = 0; i < 5; i++) breaker.record(OUTCOMES.f);
    let contacted = false;
    await expect(breaker.execute(async () => (contacted = true))).rejects.toBeInstanceOf(BreakerRejectedError);
    expect(contacted).toBe(false);
  });

  it('in Half-open attempts one test callback: success closes the circuit', () => {
    const said = script(
      policy,
      [
        [0, 'fffff'],
        [MIN, 'aa'],
        [MIN + 100, 'sS'],
      ],
      noJitter,
    );
    expect(said).toEqual([`${MIN}:probe`, `${MIN}:refused`, `${MIN + 100}:CLOSED`]);
  });

  it('…failure re-opens it with a longer wait: 1, 2, 4, 8 minutes, then 10 minutes capped (jitter not included)', () => {
    // Each test callback fails 1 s after it is let through.
    const opensAt = [4];
    for (const wait of [1, 2, 4, 8, 10, 10].map((m) => m * MIN)) opensAt.push(opensAt[opensAt.length - 1] + wait + 1_000);
    const steps: Array<[number, string]> = [[0, 'fffff']];
    for (const at of opensAt.slice(1)) steps.push([at - 1_000, 'a'], [at, 'f']);
    const said = script(policy, steps, noJitter);
    expect(said).toEqual(opensAt.slice(1).map((at) => `${at - 1_000}:probe`));
  });

  it('spreads each reset timeout by ±20 %: a 4-minute timeout lands between 3 min 12 s and 4 min 48 s', () => {
    const thirdWait = (random: () => number): number => {
      const scheduler = newScheduler();
      let wait = 0;
      scheduler.run(() => {
        const breaker = new CircuitBreaker(policy, { scheduler, random });
        breaker.transitions$.subscribe((t) => {
          if (t.to === 'OPEN') wait = breaker.status().retryAt! - t.at;
          if (t.to === 'HALF_OPEN' && breaker.status().opens < 3) breaker.record({ kind: 'failure', reason: 'HTTP 500', probe: true });
        });
        for (let i = 0; i < 5; i++) breaker.record(OUTCOMES.f);
      });
      return wait;
    };
    expect(thirdWait(() => 0)).toBe(3 * MIN + 12_000);
    expect(thirdWait(() => 0.999_999_99)).toBe(4 * MIN + 48_000);
  });

  it('counts a callback that has not answered within the 5-second call timeout as a failure', async () => {
    const scheduler = newScheduler();
    const errors: Array<Promise<unknown>> = [];
    scheduler.run(({ expectObservable }) => {
      const breaker = new CircuitBreaker(policy, { scheduler, random: noJitter });
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe('c 24999ms o 59999ms h', STATES); // 5th timeout at 25 s
      const unanswered = (): Promise<never> => new Promise<never>(() => undefined);
      for (let i = 0; i < 5; i++) scheduler.schedule(() => errors.push(breaker.execute(unanswered).catch((e: unknown) => e)), i * 5_000);
    });
    const settled = await Promise.all(errors);
    expect(settled.map((e) => e instanceof BreakerTimeoutError && e.message)).toEqual(Array(5).fill('call timed out after 5000 ms'));
  });

  it('gives each URL its own breaker: a down endpoint trips only that URL', () => {
    const scheduler = newScheduler();
    const down = new CircuitBreaker(policy, { scheduler });
    const healthy = new CircuitBreaker(policy, { scheduler });
    for (let i = 0; i < 5; i++) down.record(OUTCOMES.f);
    healthy.record(OUTCOMES.s);
    expect([down.status().state, healthy.status().state]).toEqual(['OPEN', 'CLOSED']);
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

describe('endpoint down', () => {
  const policy = endpointDownPolicy();
  const FIVE_MIN = 5 * MIN;

  it('considers the endpoint down after 3 failures in a row', () => {
    expectStates(policy, 'fsff', 'c');
    expectStates(policy, 'fff', `c 1ms o ${FIVE_MIN - 1}ms h`);
  });

  it('gives a down endpoint a single attempt every 5 minutes, no matter how many notifications are pending', () => {
    const said = script(policy, [
      [0, 'fff'],
      [FIVE_MIN - 1, 'a'],
      [FIVE_MIN + 2, 'aaaaaaaa'], // 8 pending deliveries: one goes
      [FIVE_MIN + 3, 'f'],
      [2 * FIVE_MIN + 2, 'a'],
      [2 * FIVE_MIN + 3, 'aa'],
    ]);
    expect(said).toEqual([
      `${FIVE_MIN - 1}:refused`,
      `${FIVE_MIN + 2}:probe`,
      ...Array.from({ length: 7 }, () => `${FIVE_MIN + 2}:refused`),
      `${2 * FIVE_MIN + 2}:refused`,
      `${2 * FIVE_MIN + 3}:probe`,
      `${2 * FIVE_MIN + 3}:refused`,
    ]);
  });

  it('leaves the down state as soon as it answers 2xx; pending notifications flow again', () => {
    const said = script(policy, [
      [0, 'fff'],
      [FIVE_MIN + 2, 'as'],
      [FIVE_MIN + 3, 'aaa'],
    ]);
    expect(said).toEqual([`${FIVE_MIN + 2}:probe`, ...Array.from({ length: 3 }, () => `${FIVE_MIN + 3}:admitted`)]);
  });

  it('is never disabled automatically: after 50 failed attempts it still gets one every 5 minutes', () => {
    const steps: Array<[number, string]> = [[0, 'fff']];
    for (let i = 1; i <= 50; i++) steps.push([i * (FIVE_MIN + 1), 'af']);
    steps.push([51 * (FIVE_MIN + 1), 'a']);
    const said = script(policy, steps);
    expect(said).toHaveLength(51);
    expect(said.every((s) => s.endsWith('probe'))).toBe(true);
  });
});
