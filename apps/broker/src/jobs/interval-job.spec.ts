/**
 * The interval rule of the broker's scheduled jobs, in virtual time (an RxJS VirtualTimeScheduler moved
 * frame by frame, the passes' promises settled between frames): one pass per interval, the first one
 * interval after start; never two passes at once (a tick during a pass is skipped, not queued); a failed
 * pass is logged and the next tick runs again; nothing after stop, which waits for the pass in progress.
 */
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { IntervalJob, type IntervalJobOptions, type JobGate } from './interval-job';

const INTERVAL = 30_000;

/** A pass that ends when the test says so. */
class Passes {
  started = 0;
  ended = 0;
  private release: Array<() => void> = [];

  work = (): Promise<void> => {
    this.started++;
    return new Promise<void>((done) => this.release.push(done)).then(() => {
      this.ended++;
    });
  };

  endAll(): void {
    for (const done of this.release.splice(0)) done();
  }
}

const settle = () => new Promise((done) => setImmediate(done));

describe('IntervalJob', () => {
  let scheduler: VirtualTimeScheduler;
  let errors: unknown[];
  let jobs: IntervalJob[];

  /** Moves virtual time to `at` ms, one frame at a time, letting each pass's promises settle. */
  const advanceTo = async (at: number) => {
    while (scheduler.frame < at) {
      scheduler.maxFrames = Math.min(at, scheduler.frame + 1_000);
      scheduler.flush();
      scheduler.frame = Math.max(scheduler.frame, scheduler.maxFrames);
      await settle();
    }
  };

  const job = (options: Partial<IntervalJobOptions> & Pick<IntervalJobOptions, 'work'>) => {
    const made = new IntervalJob({
      name: 'test-job',
      intervalMs: INTERVAL,
      scheduler,
      logger: { error: (...args: unknown[]) => void errors.push(args) },
      ...options,
    });
    jobs.push(made);
    return made;
  };

  beforeEach(() => {
    scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    errors = [];
    jobs = [];
  });
  afterEach(async () => {
    await Promise.all(jobs.map((j) => j.stop()));
  });

  it('runs one pass per interval, the first one interval after start', async () => {
    let passes = 0;
    job({ work: () => Promise.resolve(void passes++) }).start();

    await advanceTo(INTERVAL - 1);
    expect(passes).toBe(0);
    await advanceTo(INTERVAL);
    expect(passes).toBe(1);
    await advanceTo(2 * INTERVAL - 1);
    expect(passes).toBe(1);
    await advanceTo(5 * INTERVAL);
    expect(passes).toBe(5);
  });

  it('skips the ticks that come while a pass runs, instead of queueing them', async () => {
    const passes = new Passes();
    job({ work: passes.work }).start();

    await advanceTo(INTERVAL);
    await advanceTo(4 * INTERVAL); // three ticks during the first pass
    expect(passes.started).toBe(1);

    passes.endAll();
    await settle();
    expect(passes.ended).toBe(1);
    await advanceTo(5 * INTERVAL - 1);
    expect(passes.started).toBe(1); // nothing was queued
    await advanceTo(5 * INTERVAL);
    expect(passes.started).toBe(2);
    passes.endAll();
  });

  it('joins the pass in progress when asked for one now, rather than starting a second', async () => {
    const passes = new Passes();
    const made = job({ work: passes.work });

    const first = made.runOnce();
    const joined = made.runOnce();
    passes.endAll();
    await Promise.all([first, joined]);

    expect(passes.started).toBe(1);
    // Once it has ended, the next one is a new pass.
    const second = made.runOnce();
    passes.endAll();
    await second;
    expect(passes.started).toBe(2);
  });

  it('logs a failed pass and runs again at the next tick', async () => {
    let calls = 0;
    job({
      work: () => {
        calls++;
        return calls === 1 ? Promise.reject(new Error('database gone')) : Promise.resolve();
      },
    }).start();

    await advanceTo(INTERVAL);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain('test-job');
    await advanceTo(2 * INTERVAL);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });

  it('runs the work only when the gate lets it, asking at every tick', async () => {
    let asked = 0;
    let passes = 0;
    // Another replica holds the lock every other tick.
    const gate: JobGate = async (pass) => {
      asked++;
      if (asked % 2 === 0) return false;
      await pass();
      return true;
    };
    job({ gate, work: () => Promise.resolve(void passes++) }).start();

    await advanceTo(4 * INTERVAL);

    expect(asked).toBe(4);
    expect(passes).toBe(2);
  });

  it('stops: waits for the pass in progress, tells it to end early, and runs nothing after', async () => {
    const passes = new Passes();
    let signal: AbortSignal | undefined;
    const made = job({
      work: (stopping) => {
        signal = stopping;
        return passes.work();
      },
    });
    made.start();
    await advanceTo(INTERVAL);

    let stopped = false;
    const stopping = made.stop().then(() => (stopped = true));
    await settle();
    expect(signal?.aborted).toBe(true);
    expect(stopped).toBe(false); // the pass is still running
    passes.endAll();
    await stopping;

    await advanceTo(10 * INTERVAL);
    await made.runOnce();
    expect(passes.started).toBe(1);
  });

  it('takes an interval of 1 ms or more, in whole milliseconds', () => {
    const work = () => Promise.resolve();
    expect(() => job({ work, intervalMs: 1 })).not.toThrow();
    for (const intervalMs of [0, -1, 1.5, Number.NaN]) expect(() => job({ work, intervalMs })).toThrow(RangeError);
  });
});
