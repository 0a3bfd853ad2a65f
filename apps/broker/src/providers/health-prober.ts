import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { JOB_LOCKS, runExclusive } from '../database/exclusive';
import { ProviderRegistry } from './provider-registry';

const INTERVAL_NAME = 'provider-health-probes';

/**
 * Every BREAKER_HEALTH_INTERVAL_MS, health-checks each provider whose breaker is OPEN or HALF_OPEN.
 * One replica probes at a time (advisory lock), and never two checks at once for one provider. A
 * check that fails or crashes is an outcome for the breaker, never an error for the app.
 */
@Injectable()
export class HealthProber implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(HealthProber.name);
  private readonly inFlight = new Set<string>();
  private round: Promise<void> | null = null;
  private stopped = false;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly registry: ProviderRegistry,
    private readonly schedule: SchedulerRegistry,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  onApplicationBootstrap(): void {
    const timer = setInterval(() => void this.tick(), this.config.breaker.healthIntervalMs);
    this.schedule.addInterval(INTERVAL_NAME, timer);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.schedule.doesExist('interval', INTERVAL_NAME)) this.schedule.deleteInterval(INTERVAL_NAME);
    await this.round;
  }

  /** Resolves once the round in progress (if any) has finished. */
  async settled(): Promise<void> {
    await this.round;
  }

  /** One round of probes; public so tests and ops can trigger one. */
  async tick(): Promise<void> {
    if (this.stopped || this.round) return;
    const due = this.registry.healthAll().filter((p) => p.status.state !== 'CLOSED' && !this.inFlight.has(p.name));
    if (due.length === 0) return;
    this.round = runExclusive(this.dataSource, JOB_LOCKS.healthProbes, async () => {
      await Promise.all(due.map((p) => this.probe(p.name)));
    })
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'health probe round skipped: could not take the probe lock'))
      .finally(() => (this.round = null));
    await this.round;
  }

  private async probe(name: string): Promise<void> {
    this.inFlight.add(name);
    try {
      const result = await this.registry.healthCheck(name);
      if (!result.ok) this.logger.debug(`health check of ${name} failed: ${result.failure.reason}`);
    } finally {
      this.inFlight.delete(name);
    }
  }
}
