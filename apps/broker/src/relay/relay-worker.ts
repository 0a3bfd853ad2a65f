import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { JOB_LOCKS } from '../database/exclusive';
import type { IntervalJob } from '../jobs/interval-job';
import { JobRunner } from '../jobs/job-runner';
import { RelayService } from './relay.service';

/** Every RELAY_RETRY_INTERVAL_MS, one replica retries the relays that are due. */
@Injectable()
export class RelayWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly job: IntervalJob;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig, relay: RelayService, jobs: JobRunner) {
    this.job = jobs.exclusive(JOB_LOCKS.relayRetries, {
      name: RelayWorker.name,
      intervalMs: config.sessions.relayRetryIntervalMs,
      work: async (stopping) => {
        while (!stopping.aborted && (await relay.retryDue()) > 0);
      },
    });
  }

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.job.stop();
  }

  /** One pass now (or the one in progress); for tests and ops, which need not wait for the interval. */
  run(): Promise<void> {
    return this.job.runOnce();
  }
}
