import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { ProviderStateRepository } from './provider-state.repository';

export interface ProviderPoolUsage {
  /** Active sessions on the provider. */
  activeSessions: number;
  pool: { total: number; enabled: number; inUse: number };
}

const EMPTY: ProviderPoolUsage = { activeSessions: 0, pool: { total: 0, enabled: 0, inUse: 0 } };

/**
 * Active sessions and pool use per provider, and the load of each proxy number, read from the
 * database every POOL_USAGE_REFRESH_MS (default 5 s) and kept in memory: GET /v1/health/cpaas shows them without touching
 * the database, and the allocator orders numbers least loaded first without counting sessions on
 * every create. Between two reads this replica adds its own reservations to the counts.
 */
@Injectable()
export class PoolUsage implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PoolUsage.name);
  private usage = new Map<string, ProviderPoolUsage>();
  /** Active sessions per proxy number id, as of the last read plus this replica's reservations since. */
  private load = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly repository: ProviderStateRepository,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.refresh();
    const every = this.config.sessions.poolUsageRefreshMs;
    if (every === 0) return;
    this.timer = setInterval(() => void this.refresh(), every);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.refreshing;
  }

  of(provider: string): ProviderPoolUsage {
    return this.usage.get(provider) ?? EMPTY;
  }

  /** Ids of the numbers carrying sessions, least loaded first; a number not listed carries none. */
  loadOrder(): string[] {
    return [...this.load.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id);
  }

  noteReserved(proxyNumberId: string): void {
    this.load.set(proxyNumberId, (this.load.get(proxyNumberId) ?? 0) + 1);
  }

  refresh(): Promise<void> {
    this.refreshing ??= this.read()
      .catch((error: unknown) => this.logger.warn(`pool usage not refreshed: ${(error as Error).message}`))
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const { numbers, perNumber } = await this.repository.poolUsage();
    const usage = new Map<string, ProviderPoolUsage>();
    for (const n of numbers) usage.set(n.provider, { activeSessions: 0, pool: { total: n.total, enabled: n.enabled, inUse: 0 } });
    const load = new Map<string, number>();
    for (const row of perNumber) {
      load.set(row.proxy_number_id, row.active);
      const entry = usage.get(row.provider) ?? { activeSessions: 0, pool: { total: 0, enabled: 0, inUse: 0 } };
      usage.set(row.provider, { activeSessions: entry.activeSessions + row.active, pool: { ...entry.pool, inUse: entry.pool.inUse + 1 } });
    }
    this.usage = usage;
    this.load = load;
  }
}
