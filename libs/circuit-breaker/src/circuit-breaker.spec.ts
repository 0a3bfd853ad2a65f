/**
 * Every rule of the breaker, and both sides of each boundary, in virtual time (TestScheduler.run: 1 frame = 1 ms).
 * Outcome keys: s success, f failure, l slow success (2001 ms), q success at exactly slowCallMs (2000 ms),
 * p health check passed, x health check failed. State keys: c CLOSED, o OPEN, h HALF_OPEN.
 */
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { CircuitBreaker, telephonyPolicy, type BreakerPolicy, type BreakerTransition, type Outcome } from './index';
import { burst, every, timeline } from './testing/timeline';

const OUTCOMES: Record<string, Outcome> = {
  s: { kind: 'success' },
  f: { kind: 'failure', reason: 'HTTP 503' },
  l: { kind: 'success', durationMs: 2001 },
  q: { kind: 'success', durationMs: 2000 },
  p: { kind: 'health-pass' },
  x: { kind: 'health-fail', reason: 'health check timed out' },
};
const STATES = { c: 'CLOSED', o: 'OPEN', h: 'HALF_OPEN' };

const newScheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** Feeds `outcomes` (a marble string) to a breaker and checks the marble of its states. */
function expectStates(policy: BreakerPolicy, outcomes: string, states: string, check?: (breaker: CircuitBreaker) => void): CircuitBreaker {
  const scheduler = newScheduler();
  let breaker!: CircuitBreaker;
  scheduler.run(({ cold, expectObservable }) => {
    breaker = new CircuitBreaker(policy, { scheduler });
    expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe(states, STATES);
    breaker.connect(cold(outcomes, OUTCOMES));
  });
  check?.(breaker);
  return breaker;
}

const telephony = telephonyPolicy();

/** A telephony breaker taken to HALF_OPEN at once: 5 failures, 5 passing checks. */
function halfOpenTelephony(scheduler: TestScheduler): CircuitBreaker {
  const breaker = new CircuitBreaker(telephony, { scheduler });
  for (const key of 'fffffppppp') breaker.record(OUTCOMES[key]);
  return breaker;
}

describe('trip rule: N consecutive failures (telephony: 5)', () => {
  it('stays CLOSED after 4 failures in a row', () => {
    expectStates(telephony, 'ffff', 'c', (b) => expect(b.status().consecutiveFailures).toBe(4));
  });

  it('opens on the 5th failure in a row, naming it as lastError', () => {
    expectStates(telephony, 'fffff', 'c 3ms o', (b) => {
      expect(b.status()).toMatchObject({ state: 'OPEN', openedAt: 4, since: 4, lastError: 'HTTP 503', reason: '5 consecutive failures' });
    });
  });

  it('starts counting again after a success', () => {
    expectStates(telephony, 'ffffsffff', 'c');
  });
});

describe('trip rule: error rate over a sliding window (telephony: > 10 % over 2 min, at least 10 calls)', () => {
  const windowOnly = telephonyPolicy({ consecutiveFailures: 1000 });

  it('does not trip at exactly 10 % (2 failures in 20 calls)', () => {
    expectStates(windowOnly, 'sssssssssfsssssssssf', 'c', (b) => {
      expect(b.status()).toMatchObject({ windowCalls: 20, windowFailures: 2, windowErrorRate: 0.1 });
    });
  });

  it('trips just over 10 % (2 failures in 19 calls)', () => {
    expectStates(windowOnly, 'sssssssssfssssssssf', 'c 17ms o', (b) => {
      expect(b.status().reason).toBe('error rate 2/19 (10.53 %) > 10 % over 120000 ms');
    });
  });

  it('does not trip one call under the minimum, however bad (5 failures in 9 calls)', () => {
    expectStates(telephony, 'fsfsfsfsf', 'c', (b) => expect(b.status().windowErrorRate).toBeCloseTo(5 / 9));
  });

  it('trips at the minimum (6 failures in 10 calls)', () => {
    expectStates(telephony, 'fsfsfsfsff', 'c 8ms o');
  });

  it('can be completed by a success: the 10th call is a success, the rate is still 50 %', () => {
    expectStates(telephony, 'fsfsfsfsfs', 'c 8ms o', (b) => expect(b.status().lastError).toBe('HTTP 503'));
  });

  it('with a minimum of 1 call, takes the literal reading: one failure trips', () => {
    expectStates(telephonyPolicy({ windowMinCalls: 1 }), 'f', '(co)');
  });

  it('still counts a failure 2 min minus 1 ms old', () => {
    // f at 0; nine successes at 119 990..119 998 (10 calls, 10 %); a failure at 119 999: 2 in 11.
    expectStates(windowOnly, 'f 119989ms sssssssssf', 'c 119998ms o');
  });

  it('forgets a failure once it is 2 min old', () => {
    // f at 0; nine successes at 119 991..119 999; a failure at 120 000, when the first one has slid out: 1 in 10.
    expectStates(windowOnly, 'f 119990ms sssssssssf', 'c', (b) => {
      expect(b.status()).toMatchObject({ windowCalls: 10, windowFailures: 1 });
    });
  });
});

describe('trip rule: failure ratio since the last reset, with an attempts floor', () => {
  const ratio: BreakerPolicy = {
    trip: [{ kind: 'failure-ratio', minAttempts: 10, ratio: 0.2 }],
    recovery: { kind: 'cool-off', ms: 30_000 },
    halfOpen: { kind: 'single-trial' },
    close: { kind: 'first-success' },
    onHalfOpenFailure: 'reopen',
  };

  it('does not trip at 10 attempts, however bad (the floor is "more than 10")', () => {
    expectStates(ratio, 'ffffffffff', 'c');
  });

  it('trips on the 11th attempt', () => {
    expectStates(ratio, 'fffffffffff', 'c 9ms o 29999ms h');
  });

  it('trips at exactly the ratio (3 failures in 15 attempts)', () => {
    expectStates(ratio, 'ssssssssssssfff', 'c 13ms o 29999ms h');
  });

  it('does not trip just under the ratio (3 failures in 16 attempts)', () => {
    expectStates(ratio, 'sssssssssssssfff', 'c');
  });
});

describe('recovery: N consecutive passing health checks (telephony: 5, checks every 30 s)', () => {
  const opened = burst(0, 'fffff'); // OPEN at 4 ms

  it('stays OPEN after 4 passing checks', () => {
    expectStates(telephony, timeline([...opened, ...every(30_000, 4, 'p', 30_000)]), 'c 3ms o', (b) => {
      expect(b.status().healthPasses).toBe(4);
    });
  });

  it('moves to HALF_OPEN on the 5th passing check', () => {
    expectStates(
      telephony,
      timeline([...opened, ...every(30_000, 5, 'p', 30_000)]),
      timeline([
        [0, 'c'],
        [4, 'o'],
        [150_000, 'h'],
      ]),
      (b) => {
        expect(b.status()).toMatchObject({
          state: 'HALF_OPEN',
          reason: '5 consecutive health checks passed',
          openedAt: null,
          lastError: 'HTTP 503',
        });
      },
    );
  });

  it('starts counting again after a failing check: 4 passes, a failure, 4 passes stay OPEN', () => {
    const checks = [...every(30_000, 4, 'p', 30_000), [150_000, 'x'] as [number, string], ...every(30_000, 4, 'p', 180_000)];
    expectStates(telephony, timeline([...opened, ...checks]), 'c 3ms o', (b) => expect(b.status().healthPasses).toBe(4));
  });

  it('…and the 5th pass after the failure moves to HALF_OPEN', () => {
    const checks = [...every(30_000, 4, 'p', 30_000), [150_000, 'x'] as [number, string], ...every(30_000, 5, 'p', 180_000)];
    expectStates(
      telephony,
      timeline([...opened, ...checks]),
      timeline([
        [0, 'c'],
        [4, 'o'],
        [300_000, 'h'],
      ]),
    );
  });

  it('ignores calls while OPEN', () => {
    expectStates(telephony, 'fffffsssssssssss', 'c 3ms o');
  });
});

describe('close rule: success rate over a duration (telephony: > 95 % over 5 min, at least 10 probes)', () => {
  // OPEN at 4 ms, HALF_OPEN at 9 ms; the close gate is due at 9 + 300 000 = 300 009 ms.
  const halfOpened = burst(0, 'fffffppppp');
  const HALF_OPEN_AT = 9;
  const GATE_AT = HALF_OPEN_AT + 300_000;

  it('closes at exactly 5 minutes, not one tick before', () => {
    const scheduler = newScheduler();
    const seen: Record<number, string> = {};
    scheduler.run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker(telephony, { scheduler });
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe(
        timeline([
          [0, 'c'],
          [4, 'o'],
          [HALF_OPEN_AT, 'h'],
          [GATE_AT, 'c'],
        ]),
        STATES,
      );
      breaker.connect(cold(timeline([...halfOpened, ...burst(10, 'ssssssssss')]), OUTCOMES));
      // The second look is scheduled after the gate's own timer, so it sees the state once time GATE_AT has been handled.
      scheduler.schedule(() => {
        seen[GATE_AT - 1] = breaker.status().state;
        scheduler.schedule(() => (seen[GATE_AT] = breaker.status().state), 1);
      }, GATE_AT - 1);
    });
    expect(seen).toEqual({ [GATE_AT - 1]: 'HALF_OPEN', [GATE_AT]: 'CLOSED' });
  });

  it('does not close at exactly 95 % (19 successes, 1 slow)', () => {
    expectStates(telephony, timeline([...halfOpened, ...burst(10, 's'.repeat(19) + 'l')]), 'c 3ms o 4ms h', (b) => {
      expect(b.status()).toMatchObject({ probes: 20, probeSuccesses: 19 });
    });
  });

  it('closes just over 95 % (20 successes, 1 slow)', () => {
    expectStates(
      telephony,
      timeline([...halfOpened, ...burst(10, 's'.repeat(20) + 'l')]),
      timeline([
        [0, 'c'],
        [4, 'o'],
        [9, 'h'],
        [GATE_AT, 'c'],
      ]),
      (b) => {
        expect(b.status().reason).toBe('probe success 20/21 (95.24 %) > 95 % over 300000 ms');
      },
    );
  });

  it('waits for the minimum probes: 9 probes by 5 min, the 10th at 6 min closes', () => {
    const probes = [...burst(10, 'sssssssss'), [360_000, 's'] as [number, string]];
    expectStates(
      telephony,
      timeline([...halfOpened, ...probes]),
      timeline([
        [0, 'c'],
        [4, 'o'],
        [9, 'h'],
        [360_000, 'c'],
      ]),
    );
  });

  it('counts health checks in the success rate but not towards the minimum: they alone never close', () => {
    expectStates(telephony, timeline([...halfOpened, ...every(30_000, 20, 'p', 30_009)]), 'c 3ms o 4ms h', (b) => {
      expect(b.status()).toMatchObject({ state: 'HALF_OPEN', probes: 20, probeSuccesses: 20, trafficProbes: 0 });
    });
  });

  it('…and 9 probe calls with 20 passing checks still wait for the 10th call', () => {
    const probes = [...burst(10, 'sssssssss'), ...every(30_000, 20, 'p', 30_009), [700_000, 's'] as [number, string]];
    expectStates(
      telephony,
      timeline([...halfOpened, ...probes]),
      timeline([
        [0, 'c'],
        [4, 'o'],
        [9, 'h'],
        [700_000, 'c'],
      ]),
      (b) => expect(b.status().reason).toBe('probe success 30/30 (100 %) > 95 % over 699991 ms'),
    );
  });

  it('counts passing health checks in the success rate: 10 fast calls and a slow one close only once checks lift 10/11 to 20/21', () => {
    expectStates(telephony, timeline([...halfOpened, ...burst(10, 'ssssssssssl')]), 'c 3ms o 4ms h');
    expectStates(
      telephony,
      timeline([...halfOpened, ...burst(10, 'ssssssssssl'), ...every(30_000, 10, 'p', 30_009)]),
      timeline([
        [0, 'c'],
        [4, 'o'],
        [9, 'h'],
        [GATE_AT, 'c'],
      ]),
    );
  });

  it('does not re-open on slow probes, nor count them as successes', () => {
    expectStates(telephony, timeline([...halfOpened, ...burst(10, 'llllllllll')]), 'c 3ms o 4ms h', (b) => {
      expect(b.status()).toMatchObject({ state: 'HALF_OPEN', probes: 10, probeSuccesses: 0 });
    });
  });

  it('counts a probe of exactly slowCallMs as a success (slow means slower than)', () => {
    expectStates(
      telephony,
      timeline([...halfOpened, ...burst(10, 'qqqqqqqqqq')]),
      timeline([
        [0, 'c'],
        [4, 'o'],
        [9, 'h'],
        [GATE_AT, 'c'],
      ]),
    );
  });
});

describe('failure in HALF_OPEN', () => {
  const halfOpened = burst(0, 'fffffppppp'); // HALF_OPEN at 9 ms

  it('re-opens on any failed probe call, with fresh counters', () => {
    expectStates(telephony, timeline([...halfOpened, ...burst(10, 'sssf')]), 'c 3ms o 4ms h 3ms o', (b) => {
      expect(b.status()).toMatchObject({
        state: 'OPEN',
        openedAt: 13,
        healthPasses: 0,
        probes: 0,
        reason: 'probe failed: HTTP 503',
        opens: 2,
      });
    });
  });

  it('re-opens on a failed health check, which becomes lastError', () => {
    expectStates(telephony, timeline([...halfOpened, ...burst(10, 'ssx')]), 'c 3ms o 4ms h 2ms o', (b) => {
      expect(b.status()).toMatchObject({ lastError: 'health check timed out', reason: 'health check failed: health check timed out' });
    });
  });

  it('ignores the outcome of a call that was not admitted as a probe', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const breaker = new CircuitBreaker(telephony, { scheduler });
      for (const key of 'fffffppppp') breaker.record(OUTCOMES[key]);
      breaker.record({ kind: 'failure', reason: 'late', probe: false });
      breaker.record({ kind: 'success', probe: false });
      expect(breaker.status()).toMatchObject({ state: 'HALF_OPEN', probes: 0 });
    });
  });
});

describe('following (another copy decides) and leading again', () => {
  /** A telephony breaker in virtual time, following from the start; `steps` run at their times, then `lead()` at `leadAt`. */
  function follower(steps: Array<[number, string]>, leadAt: number, policy: BreakerPolicy = telephony) {
    const scheduler = newScheduler();
    const seen: { beforeLead?: string; transitions: BreakerTransition[]; breaker?: CircuitBreaker } = { transitions: [] };
    scheduler.run(() => {
      const breaker = new CircuitBreaker(policy, { scheduler, following: true });
      seen.breaker = breaker;
      breaker.transitions$.subscribe((t) => seen.transitions.push(t));
      for (const [at, keys] of steps) scheduler.schedule(() => [...keys].forEach((key) => breaker.record(OUTCOMES[key])), at);
      scheduler.schedule(() => {
        seen.beforeLead = breaker.status().state;
        breaker.lead();
      }, leadAt);
    });
    return { ...seen, breaker: seen.breaker! };
  }

  it('counts 5 failures in a row but stays CLOSED; leading, it trips at once on them', () => {
    const { beforeLead, transitions, breaker } = follower([[0, 'fffff']], 1_000);
    expect(beforeLead).toBe('CLOSED');
    expect(transitions).toEqual([{ from: 'CLOSED', to: 'OPEN', at: 1_000, reason: '5 consecutive failures', lastError: 'HTTP 503' }]);
    expect(breaker.isFollowing).toBe(false);
  });

  it('leads on 4 failures in a row without tripping, and the 5th, recorded as leader, trips', () => {
    const { transitions } = follower(
      [
        [0, 'ffff'],
        [2_000, 'f'],
      ],
      1_000,
    );
    expect(transitions.map((t) => [t.to, t.at])).toEqual([['OPEN', 2_000]]);
  });

  it('counts the window: 2 failures in 11 calls trip on lead while they are in the 2-minute window, not once one slid out', () => {
    const calls: Array<[number, string]> = [
      [0, 'f'],
      [10, 'sssssssss'],
      [30_000, 'f'],
    ];
    expect(follower(calls, 119_999).transitions.map((t) => t.reason)).toEqual(['error rate 2/11 (18.18 %) > 10 % over 120000 ms']);
    expect(follower(calls, 121_000).transitions).toEqual([]);
  });

  it('counts passing health checks in OPEN; leading after the 5th, it half-opens', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const breaker = new CircuitBreaker(telephony, { scheduler });
      for (const key of 'fffff') breaker.record(OUTCOMES[key]); // OPEN, decided here
      breaker.follow();
      for (const key of 'ppppp') breaker.record(OUTCOMES[key]);
      expect(breaker.status()).toMatchObject({ state: 'OPEN', healthPasses: 5 });
      breaker.lead();
      expect(breaker.status()).toMatchObject({ state: 'HALF_OPEN', reason: '5 consecutive health checks passed' });
    });
  });

  it('keeps a HALF_OPEN probe failure for lead: stays HALF_OPEN while following, re-opens on lead', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const breaker = halfOpenTelephony(scheduler);
      breaker.follow();
      breaker.record({ kind: 'success', probe: true });
      breaker.record({ kind: 'failure', reason: 'HTTP 500', probe: true });
      breaker.record({ kind: 'success', probe: true });
      // The failure is owed, not counted: two probes, both calls.
      expect(breaker.status()).toMatchObject({ state: 'HALF_OPEN', probes: 2, trafficProbes: 2 });
      breaker.lead();
      expect(breaker.status()).toMatchObject({ state: 'OPEN', reason: 'probe failed: HTTP 500', lastError: 'HTTP 500' });
    });
  });

  it('lets the close gate fall due while following and closes on lead; before the gate, lead leaves it to the gate', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const breaker = halfOpenTelephony(scheduler); // HALF_OPEN at 0, gate due at 300 000
      breaker.follow();
      for (let i = 0; i < 10; i++) breaker.record({ kind: 'success', probe: true });
      scheduler.schedule(() => {
        breaker.lead();
        expect(breaker.status().state).toBe('HALF_OPEN');
        breaker.follow();
      }, 299_999);
      scheduler.schedule(() => expect(breaker.status().state).toBe('HALF_OPEN'), 300_001); // the gate ran, following: nothing
      scheduler.schedule(() => {
        breaker.lead();
        expect(breaker.status()).toMatchObject({ state: 'CLOSED', reason: 'probe success 10/10 (100 %) > 95 % over 300002 ms' });
      }, 300_002);
    });
  });
});

describe('half-open admission', () => {
  it('share 0.1 admits exactly every 10th call as a probe and refuses the rest', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const breaker = new CircuitBreaker(telephony, { scheduler });
      for (const key of 'fffffppppp') breaker.record(OUTCOMES[key]);
      const admissions = Array.from({ length: 30 }, () => breaker.admit());
      expect(admissions.flatMap((a, i) => (a.admitted ? [i + 1] : []))).toEqual([10, 20, 30]);
      expect(admissions.every((a) => a.admitted === a.probe)).toBe(true);
    });
  });

  it('single trial admits one call, then none until its outcome is recorded', () => {
    const policy: BreakerPolicy = {
      trip: [{ kind: 'consecutive-failures', failures: 1 }],
      recovery: { kind: 'cool-off', ms: 10 },
      halfOpen: { kind: 'single-trial' },
      close: { kind: 'success-rate', rate: 0.5, durationMs: 100, minProbes: 3 },
      onHalfOpenFailure: 'reopen',
    };
    const scheduler = newScheduler();
    scheduler.run(() => {
      const breaker = new CircuitBreaker(policy, { scheduler });
      breaker.record(OUTCOMES.f);
      scheduler.schedule(() => {
        expect(breaker.admit()).toEqual({ admitted: true, probe: true });
        expect(breaker.admit()).toEqual({ admitted: false, probe: false });
        breaker.record({ kind: 'success', probe: true });
        expect(breaker.admit()).toEqual({ admitted: true, probe: true });
      }, 10);
    });
  });
});

describe('recovery: cool-off', () => {
  const policy: BreakerPolicy = {
    trip: [{ kind: 'consecutive-failures', failures: 1 }],
    recovery: { kind: 'cool-off', ms: 30_000 },
    halfOpen: { kind: 'single-trial' },
    close: { kind: 'first-success' },
    onHalfOpenFailure: 'reopen',
  };

  it('refuses calls until the cool-off has elapsed, then lets exactly one through', () => {
    const scheduler = newScheduler();
    const admissions: string[] = [];
    scheduler.run(({ expectObservable }) => {
      const breaker = new CircuitBreaker(policy, { scheduler });
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe('o 29999ms h', STATES); // opened at 0 by the failure below
      breaker.record(OUTCOMES.f);
      const admit = (): void => {
        const a = breaker.admit();
        admissions.push(`${scheduler.now()}:${a.admitted ? (a.probe ? 'probe' : 'call') : 'refused'}`);
      };
      scheduler.schedule(admit, 29_999);
      scheduler.schedule(() => (admit(), admit()), 30_000);
    });
    expect(admissions).toEqual(['29999:refused', '30000:probe', '30000:refused']);
  });

  it('refuses the trial while following, and half-opens on lead once the cool-off is due', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const breaker = new CircuitBreaker(policy, { scheduler });
      breaker.record({ kind: 'failure', reason: 'HTTP 503' }); // OPEN at 0, trial due at 30 000
      breaker.follow();
      scheduler.schedule(() => {
        expect(breaker.admit()).toEqual({ admitted: false, probe: false });
        expect(breaker.status().state).toBe('OPEN');
        breaker.lead();
        expect(breaker.status()).toMatchObject({ state: 'HALF_OPEN', reason: 'cool-off of 30000 ms elapsed' });
      }, 30_050);
    });
  });

  it('admits the trial at the exact time even when the scheduled cool-off has not run yet', () => {
    let now = 0;
    const lateScheduler = newScheduler();
    lateScheduler.now = () => now; // timers scheduled on it never run: time moves, work does not
    const breaker = new CircuitBreaker(policy, { scheduler: lateScheduler });
    breaker.record(OUTCOMES.f);
    now = 29_999;
    expect(breaker.admit().admitted).toBe(false);
    now = 30_000;
    expect(breaker.admit()).toEqual({ admitted: true, probe: true });
    expect(breaker.status()).toMatchObject({ state: 'HALF_OPEN', since: 30_000, reason: 'cool-off of 30000 ms elapsed' });
  });
});

describe('recovery: backoff with jitter', () => {
  const backoff = (onHalfOpenFailure: 'reopen' | 'reopen-grow' = 'reopen-grow'): BreakerPolicy => ({
    trip: [{ kind: 'consecutive-failures', failures: 1 }],
    recovery: { kind: 'backoff', initialMs: 60_000, factor: 2, maxMs: 600_000, jitter: 0.2 },
    halfOpen: { kind: 'single-trial' },
    close: { kind: 'first-success' },
    onHalfOpenFailure,
  });

  /** Wait of each opening when every trial fails. */
  function waits(random: () => number, opens: number, onHalfOpenFailure?: 'reopen' | 'reopen-grow'): number[] {
    const scheduler = newScheduler();
    const result: number[] = [];
    scheduler.run(() => {
      const breaker = new CircuitBreaker(backoff(onHalfOpenFailure), { scheduler, random });
      breaker.transitions$.subscribe((t) => {
        if (t.to === 'OPEN') result.push(breaker.status().retryAt! - t.at);
        if (t.to === 'HALF_OPEN' && result.length < opens) breaker.record({ kind: 'failure', reason: 'still down', probe: true });
      });
      breaker.record(OUTCOMES.f);
    });
    return result;
  }

  it('grows by the factor up to the cap: 1, 2, 4, 8, 10, 10 min (no jitter at random = 0.5)', () => {
    expect(waits(() => 0.5, 6)).toEqual([60_000, 120_000, 240_000, 480_000, 600_000, 600_000]);
  });

  it('does not grow with onHalfOpenFailure: reopen', () => {
    expect(waits(() => 0.5, 3, 'reopen')).toEqual([60_000, 60_000, 60_000]);
  });

  it('keeps jitter within ±20 %: random 0 gives −20 %, random just under 1 gives +20 %', () => {
    expect(waits(() => 0, 3)).toEqual([48_000, 96_000, 192_000]);
    expect(waits(() => 0.999_999_9, 3)).toEqual([72_000, 144_000, 288_000]);
  });

  it('applies jitter around the cap: a capped wait lands in 8..12 min', () => {
    expect(waits(() => 0, 6).slice(4)).toEqual([480_000, 480_000]);
    expect(waits(() => 0.999_999_9, 6).slice(4)).toEqual([720_000, 720_000]);
  });

  it('half-opens exactly when the jittered wait has elapsed', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const breaker = new CircuitBreaker(backoff(), { scheduler, random: () => 0.25 });
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe(
        timeline([
          [0, 'o'],
          [54_000, 'h'],
        ]),
        STATES,
      ); // 60 s × (1 − 0.1)
      breaker.record(OUTCOMES.f);
    });
  });
});

describe('streams', () => {
  it('state$ replays the current status to a late subscriber', () => {
    const scheduler = newScheduler();
    scheduler.run(({ expectObservable }) => {
      const breaker = new CircuitBreaker(telephony, { scheduler });
      for (const key of 'fffff') breaker.record(OUTCOMES[key]);
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe('o', STATES);
    });
  });

  it('transitions$ carries from, to, reason, time and lastError', () => {
    const scheduler = newScheduler();
    const transitions: BreakerTransition[] = [];
    scheduler.run(({ cold }) => {
      const breaker = new CircuitBreaker(telephony, { scheduler });
      breaker.transitions$.subscribe((t) => transitions.push(t));
      breaker.connect(cold('fffffppppp', OUTCOMES));
    });
    expect(transitions).toEqual([
      { from: 'CLOSED', to: 'OPEN', reason: '5 consecutive failures', at: 4, lastError: 'HTTP 503' },
      { from: 'OPEN', to: 'HALF_OPEN', reason: '5 consecutive health checks passed', at: 9, lastError: 'HTTP 503' },
    ]);
  });

  it('dispose completes both streams, cancels the scheduled cool-off and ignores later outcomes', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const policy: BreakerPolicy = { ...telephony, recovery: { kind: 'cool-off', ms: 100 } };
      const breaker = new CircuitBreaker(policy, { scheduler });
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe('c 3ms o 45ms |', STATES);
      expectObservable(breaker.transitions$.pipe(map((t) => t.to))).toBe('4ms o 45ms |', STATES_BY_NAME);
      breaker.connect(cold('fffff', OUTCOMES));
      scheduler.schedule(() => breaker.dispose(), 50);
      scheduler.schedule(() => breaker.record(OUTCOMES.p), 60);
      scheduler.schedule(() => expect(breaker.status().state).toBe('OPEN'), 200);
    });
  });

  it('connect stops recording when its subscription is cancelled', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker(telephony, { scheduler });
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe('c', STATES);
      const connection = breaker.connect(cold('ffff 5ms f', OUTCOMES));
      scheduler.schedule(() => connection.unsubscribe(), 5);
    });
  });
});

const STATES_BY_NAME = { o: 'OPEN', h: 'HALF_OPEN', c: 'CLOSED' };

describe('default scheduler', () => {
  it('runs in virtual time inside TestScheduler.run, so code that builds breakers without a scheduler stays testable', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker({ ...telephony, recovery: { kind: 'cool-off', ms: 30_000 } }); // no scheduler passed
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe('c 3ms o 29999ms h', STATES);
      breaker.connect(cold('fffff', OUTCOMES));
    });
  });
});

describe('README example', () => {
  it('opens on the 5th failure and half-opens after 5 passing checks 30 s apart', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker(telephonyPolicy(), { scheduler });
      expectObservable(breaker.state$.pipe(map((s) => s.state))).toBe('c 3ms o 149999ms h', STATES);
      breaker.connect(cold('fffff 29999ms p 29999ms p 29999ms p 29999ms p 29999ms p', OUTCOMES));
    });
  });
});
