import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { JOB_LOCKS } from '../database/exclusive';
import type { IntervalJob } from '../jobs/interval-job';
import { JobRunner } from '../jobs/job-runner';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { MessageTextRepository } from './message-text.repository';

const BATCH = 1_000;
const DAY_MS = 86_400_000;

/**
 * INTERACTION_TEXT_RETENTION_DAYS (30): a relayed message's text is erased once it is that many days old,
 * to the millisecond of the app's clock; who wrote to whom, when, and what became of it stay. Every
 * SESSION_SWEEP_INTERVAL_MS, on one replica at a time (an advisory lock), in batches, so any number of
 * replicas run it safely and a backlog after an upgrade is worked off without one long transaction.
 */
@Injectable()
export class MessageTextRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MessageTextRetention.name);
  private readonly job: IntervalJob;

  constructor(
    private readonly repository: MessageTextRepository,
    private readonly metrics: BrokerMetrics,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    jobs: JobRunner,
  ) {
    this.job = jobs.exclusive(JOB_LOCKS.messageTextRetention, {
      name: MessageTextRetention.name,
      intervalMs: config.sessions.sweepIntervalMs,
      work: (stopping) => this.pass(stopping),
    });
  }

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.job.stop();
  }

  /** One pass now (or the one in progress), for tests and operators who will not wait for the interval. */
  runOnce(): Promise<void> {
    return this.job.runOnce();
  }

  private async pass(stopping: AbortSignal): Promise<void> {
    const cutoff = new Date(this.clock.now() - this.config.interactionTextRetentionDays * DAY_MS);
    let total = 0;
    for (;;) {
      const erased = await this.repository.eraseUpTo(cutoff, BATCH);
      total += erased;
      this.metrics.interactionTextsErased.inc(erased);
      if (erased < BATCH || stopping.aborted) break;
    }
    if (total > 0) this.logger.log(`erased the text of ${total} messages older than ${this.config.interactionTextRetentionDays} days`);
  }
}
