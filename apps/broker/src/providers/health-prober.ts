import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { BreakerStateStore } from './breaker-state.store';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { ProviderBreakers } from './provider-breakers';
import { ProviderRegistry } from './provider-registry';

const INTERVAL_NAME = 'provider-health-probes';

/**
 * Every BREAKER_HEALTH_INTERVAL_MS, health-checks each provider whose breaker is OPEN or HALF_OPEN,
 * on the breaker leader only (one check per interval per provider, cluster-wide), or on a
 * replica cut off from the database, which decides alone. Never two checks at once for one provider.
 * The leader persists the breaker after each check under its fence, so the pass count survives a
 * change of leader and a check made by a former leader is dropped. A check that fails or crashes is
 * an outcome for the breaker, never an error for the app.
 */
@Injectable()
export class HealthProber implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(HealthProber.name);
  private readonly inFlight = new Set<string>();
  private round: Promise<void> | null = null;
  private stopped = false;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(ProviderRegistry) private readonly registry: Pick<ProviderRegistry, 'healthCheck'>,
    @Inject(ProviderBreakers) private readonly breakers: Pick<ProviderBreakers, 'healthAll' | 'get'>,
    @Inject(BreakerLeadership) private readonly leadership: Pick<BreakerLeadership, 'decidesHere' | 'current'>,
    @Inject(BreakerStateStore) private readonly store: Pick<BreakerStateStore, 'recordSnapshot'>,
    private readonly schedule: SchedulerRegistry,
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
    if (this.stopped || this.round || !this.leadership.decidesHere) return;
    const due = this.breakers.healthAll().filter((p) => p.status.state !== 'CLOSED' && !this.inFlight.has(p.name));
    if (due.length === 0) return;
    this.round = Promise.all(due.map((p) => this.probe(p.name)))
      .then(() => undefined)
      .finally(() => (this.round = null));
    await this.round;
  }

  private async probe(name: string): Promise<void> {
    this.inFlight.add(name);
    try {
      const result = await this.registry.healthCheck(name);
      if (!result.ok) this.logger.debug(`health check of ${name} failed: ${result.failure.reason}`);
      const fence = this.leadership.current.fence;
      if (fence) this.store.recordSnapshot(name, this.breakers.get(name).toJSON(), fence);
    } catch (error) {
      this.logger.warn(`health check of ${name} crashed: ${(error as Error).message}`);
    } finally {
      this.inFlight.delete(name);
    }
  }
}
