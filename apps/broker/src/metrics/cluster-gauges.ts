import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import type { IntervalJob } from '../jobs/interval-job';
import { JobRunner } from '../jobs/job-runner';
import { BrokerMetrics } from './broker-metrics';
import { ClusterGaugesRepository, type ClusterFigures } from './cluster-gauges.repository';

/** Every label value a series can take is known, so each series exists (at 0) before its first event. */
/** The label values of `broker_sessions_active{channel}`: a session's channels, joined. */
const CHANNELS = ['sms', 'voice', 'voice+sms'];
const DELIVERY_KINDS = ['account', 'ops'];
const GIVE_UP_REASONS = ['never-attempted', 'no-response', 'http-4xx', 'http-5xx', 'http-other'];

/**
 * The cluster's state as gauges: active sessions, the pool, the webhook and relay backlogs, read from
 * the database every METRICS_REFRESH_MS on every replica (each reports the same figures, so aggregate
 * with max), instead of counted on the paths that change them. `broker_database_up` says whether the
 * last read reached the database; when it did not, the figures keep the last values read.
 */
@Injectable()
export class ClusterGauges implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly job: IntervalJob;
  /** The given-up count last exported per label set: the counter moves by what the database added since. */
  private readonly givenUpSeen = new Map<string, number>();

  constructor(
    private readonly repository: ClusterGaugesRepository,
    private readonly metrics: BrokerMetrics,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    jobs: JobRunner,
  ) {
    this.job = jobs.job({ name: ClusterGauges.name, intervalMs: config.metricsRefreshMs, work: () => this.read() });
  }

  onApplicationBootstrap(): void {
    this.job.start();
    void this.job.runOnce();
  }

  onApplicationShutdown(): Promise<void> {
    return this.job.stop();
  }

  /** A read now (or the one in progress); resolves when it has ended. */
  refresh(): Promise<void> {
    return this.job.runOnce();
  }

  private async read(): Promise<void> {
    const now = this.clock.now();
    let figures: ClusterFigures;
    try {
      figures = await this.repository.read(now);
    } catch (error) {
      this.metrics.databaseUp.set(0);
      throw error;
    }
    this.export(figures, now);
    this.metrics.databaseUp.set(1);
    this.metrics.clusterGaugesReadAt.set(now / 1000);
  }

  private export(figures: ClusterFigures, now: number): void {
    const m = this.metrics;
    const providers = [...new Set([...this.config.providers.map((p) => p.name), ...figures.pool.map((p) => p.provider)])];
    const age = (oldest: Date | null) => (oldest ? Math.max(0, now - oldest.getTime()) / 1000 : 0);

    // Reset, then set: a provider whose last number was removed leaves no stale series behind.
    m.sessionsActive.reset();
    for (const provider of providers) for (const channel of CHANNELS) m.sessionsActive.set({ provider, channel }, 0);
    for (const row of figures.sessions) m.sessionsActive.set({ provider: row.provider, channel: row.channel }, row.active);

    for (const gauge of [m.poolNumbers, m.poolNumbersIdle, m.poolHeadroom]) gauge.reset();
    for (const provider of providers) {
      const row = figures.pool.find((p) => p.provider === provider) ?? { enabled: 0, disabled: 0, idle: 0, busiest: 0 };
      m.poolNumbers.set({ provider, state: 'enabled' }, row.enabled);
      m.poolNumbers.set({ provider, state: 'disabled' }, row.disabled);
      m.poolNumbersIdle.set({ provider }, row.idle);
      m.poolHeadroom.set({ provider }, Math.max(0, row.enabled - row.busiest));
    }

    for (const kind of DELIVERY_KINDS) {
      const row = figures.webhooks.find((w) => w.kind === kind);
      m.webhookDeliveriesPending.set({ kind }, row?.pending ?? 0);
      m.webhookOldestPendingAge.set({ kind }, age(row?.oldest ?? null));
      for (const reason of GIVE_UP_REASONS) {
        const count = figures.givenUp.find((g) => g.kind === kind && g.reason === reason)?.count ?? 0;
        this.advanceGivenUp(kind, reason, count);
      }
    }

    m.relaysPending.set(figures.relays.pending);
    m.relayOldestPendingAge.set(age(figures.relays.oldest));
  }

  /** Given-up rows are never deleted, so the count only grows; were it to drop (a restore), the counter starts again from it. */
  private advanceGivenUp(kind: string, reason: string, count: number): void {
    const key = `${kind}\u0000${reason}`;
    const seen = this.givenUpSeen.get(key);
    if (seen === undefined || count < seen) {
      this.metrics.webhookDeliveriesGivenUp.remove({ kind, reason });
      this.metrics.webhookDeliveriesGivenUp.inc({ kind, reason }, count);
    } else if (count > seen) {
      this.metrics.webhookDeliveriesGivenUp.inc({ kind, reason }, count - seen);
    }
    this.givenUpSeen.set(key, count);
  }
}
