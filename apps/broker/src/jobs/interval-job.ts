/**
 * The broker's scheduled work: a pass every `intervalMs`, never two passes of one job at once in this
 * process (a tick that finds a pass still running is skipped, not queued), none after `stop()`, and a pass
 * that fails is logged and tried again at the next tick. Which replica runs a pass is the gate's choice
 * (`JobGate`: an advisory lock, the leader, or every replica). Time comes from an RxJS scheduler, so the
 * interval rule is tested in virtual time.
 */
import { Logger } from '@nestjs/common';
import { asyncScheduler, interval, type SchedulerLike, type Subscription } from 'rxjs';

/** Runs one pass (`pass`) if this replica may run it now; resolves to whether it did. */
export type JobGate = (pass: () => Promise<void>) => Promise<boolean>;

/** Every replica runs every pass. */
const everyReplica: JobGate = async (pass) => {
  await pass();
  return true;
};

export interface IntervalJobOptions {
  /** Names the job in the logs. */
  readonly name: string;
  readonly intervalMs: number;
  /** One pass; `stopping` is aborted when the app shuts down, so a long pass can end early. */
  readonly work: (stopping: AbortSignal) => Promise<void>;
  readonly gate?: JobGate;
  /** Where the interval's time comes from: `asyncScheduler` unless a test passes a virtual one. */
  readonly scheduler?: SchedulerLike;
  readonly logger?: Pick<Logger, 'error'>;
}

export class IntervalJob {
  private readonly stopping = new AbortController();
  private readonly logger: Pick<Logger, 'error'>;
  private timer: Subscription | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly options: IntervalJobOptions) {
    if (!(Number.isInteger(options.intervalMs) && options.intervalMs > 0))
      throw new RangeError(`${options.name}: intervalMs must be a positive integer, got ${options.intervalMs}`);
    this.logger = options.logger ?? new Logger(options.name);
  }

  /** Starts the interval: the first pass comes one interval after this. */
  start(): void {
    if (this.timer || this.stopping.signal.aborted) return;
    this.timer = interval(this.options.intervalMs, this.options.scheduler ?? asyncScheduler).subscribe(() => void this.runOnce());
  }

  /** Stops the interval and waits for the pass in progress, if any. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.timer?.unsubscribe();
    this.timer = null;
    await this.running;
  }

  /** Runs a pass now, or joins the one in progress; resolves when it has ended (never rejects). */
  runOnce(): Promise<void> {
    if (this.stopping.signal.aborted) return Promise.resolve();
    this.running ??= (this.options.gate ?? everyReplica)(() => this.options.work(this.stopping.signal))
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error({ err: error }, `${this.options.name}: pass failed; the next one retries`))
      .finally(() => (this.running = null));
    return this.running;
  }

  /** Resolves once the pass in progress (if any) has ended. */
  async settled(): Promise<void> {
    await this.running;
  }
}
