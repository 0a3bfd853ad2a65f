import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { JOB_LOCKS } from '../database/exclusive';
import { IdempotencyService } from '../idempotency/idempotency.service';
import type { IntervalJob } from '../jobs/interval-job';
import { JobRunner } from '../jobs/job-runner';
import { expireLapsed } from './expire-lapsed';
import { SessionRepository } from './session.repository';
import { SessionsService } from './sessions.service';

const BATCH = 100;

/**
 * Every SESSION_SWEEP_INTERVAL_MS, on one replica at a time: marks sessions past their inactiveAt
 * (expiresAt, or sooner their idle deadline) on the broker's clock as `expired`, with why (they
 * were already inactive from that instant, on every replica), releases the bindings of ended
 * sessions (retrying those whose unbind failed), drops reservations a crashed process left
 * `pending`, and forgets idempotency records older than 24 h.
 */
@Injectable()
export class SessionSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SessionSweeper.name);
  private readonly job: IntervalJob;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly repository: SessionRepository,
    private readonly sessions: SessionsService,
    private readonly idempotency: IdempotencyService,
    jobs: JobRunner,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.job = jobs.exclusive(JOB_LOCKS.sessionSweeper, {
      name: SessionSweeper.name,
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

  /** One pass now (or the one in progress); for tests, which need not wait for the interval. */
  sweep(): Promise<void> {
    return this.job.runOnce();
  }

  private async pass(stopping: AbortSignal): Promise<void> {
    while ((await this.expireBatch()) === BATCH);
    await this.releaseEnded(stopping);
    await this.dropStaleReservations();
    await this.idempotency.purgeExpired();
  }

  private expireBatch(): Promise<number> {
    const now = new Date(this.clock.now());
    return expireLapsed(this.repository, now, (tx) => tx.lockExpired(BATCH, now));
  }

  private async releaseEnded(stopping: AbortSignal): Promise<void> {
    for (const session of await this.repository.unreleased(BATCH)) {
      if (stopping.aborted) return;
      await this.sessions.releaseBinding(session);
    }
  }

  private async dropStaleReservations(): Promise<void> {
    // Older than any create could still be working on it: its process is gone.
    const staleAfterMs = this.config.providerCallTimeoutMs * (this.config.providers.length + 1) + 60_000;
    for (const row of await this.repository.dropStaleReservations(new Date(this.clock.now() - staleAfterMs))) {
      this.logger.warn(
        `dropped reservation ${row.id} (${row.provider} ${row.proxyNumber}) left pending by a process that stopped mid-create`,
      );
    }
  }
}
