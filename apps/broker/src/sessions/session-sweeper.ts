import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { JOB_LOCKS, runExclusive } from '../database/exclusive';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { SessionEvents } from './session-events';
import { Session } from './session.entity';
import { SessionsService } from './sessions.service';

const INTERVAL_NAME = 'session-sweeper';
const BATCH = 100;

/**
 * Every SESSION_SWEEP_INTERVAL_MS, on one replica at a time: marks sessions past expiresAt as
 * `expired` (they were already inactive from that instant), releases the bindings of ended
 * sessions (retrying those whose unbind failed), drops reservations a crashed process left
 * `pending`, and forgets idempotency records older than 24 h.
 */
@Injectable()
export class SessionSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SessionSweeper.name);
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sessions: SessionsService,
    private readonly events: SessionEvents,
    private readonly idempotency: IdempotencyService,
    private readonly schedule: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule.addInterval(
      INTERVAL_NAME,
      setInterval(() => void this.sweep(), this.config.sessions.sweepIntervalMs),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.schedule.doesExist('interval', INTERVAL_NAME)) this.schedule.deleteInterval(INTERVAL_NAME);
    await this.running;
  }

  /** One pass; public so tests can run one without waiting for the interval. */
  async sweep(): Promise<void> {
    if (this.stopped || this.running) return this.running ?? undefined;
    this.running = runExclusive(this.dataSource, JOB_LOCKS.sessionSweeper, async () => {
      while ((await this.expireBatch()) === BATCH);
      await this.releaseEnded();
      await this.dropStaleReservations();
      await this.idempotency.purgeExpired();
    })
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error({ err: error }, 'session sweep failed; next pass retries'))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async expireBatch(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const due = await manager
        .getRepository(Session)
        .createQueryBuilder('s')
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .where(`s.status = 'active' AND s.expiresAt <= now()`)
        .orderBy('s.expiresAt')
        .limit(BATCH)
        .getMany();
      if (due.length === 0) return 0;
      const ids = due.map((s) => s.id);
      await manager.query(`UPDATE sessions SET status = 'expired', ended_at = now() WHERE id = ANY($1::uuid[])`, [ids]);
      await manager.query('UPDATE session_participants SET active = false WHERE session_id = ANY($1::uuid[])', [ids]);
      for (const session of due) await this.events.ended(manager, { ...session, status: 'expired' }, 'expired');
      return due.length;
    });
  }

  private async releaseEnded(): Promise<void> {
    const ended = await this.dataSource
      .getRepository(Session)
      .createQueryBuilder('s')
      .where(`s.status IN ('closed', 'expired') AND s.releasedAt IS NULL`)
      .orderBy('s.endedAt')
      .limit(BATCH)
      .getMany();
    for (const session of ended) {
      if (this.stopped) return;
      await this.sessions.releaseBinding(session);
    }
  }

  private async dropStaleReservations(): Promise<void> {
    // Older than any create could still be working on it: its process is gone.
    const staleAfterMs = this.config.providerCallTimeoutMs * (this.config.providers.length + 1) + 60_000;
    // TypeORM answers a DELETE with [rows, affected count], not the rows alone.
    const [dropped] = (await this.dataSource.query(
      `DELETE FROM sessions WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1) RETURNING id, provider, proxy_number`,
      [staleAfterMs / 1000],
    )) as [Array<{ id: string; provider: string; proxy_number: string }>, number];
    for (const row of dropped) {
      this.logger.warn(
        `dropped reservation ${row.id} (${row.provider} ${row.proxy_number}) left pending by a process that stopped mid-create`,
      );
    }
  }
}
