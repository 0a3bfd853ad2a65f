/**
 * The webhook lane's two breaker policies against their documents, sentence by sentence, in virtual time
 * (1 frame = 1 ms). Outcome keys: s success, f failure, l slow success, p health check passed, x health check failed.
 */
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  BreakerRejectedError,
  BreakerTimeoutError,
  CircuitBreaker,
  type Admission,
  type BreakerPolicy,
  type Outcome,
} from '@app/circuit-breaker';
import { callbackUrlPolicy, endpointDownPolicy } from './endpoint-policies';

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
