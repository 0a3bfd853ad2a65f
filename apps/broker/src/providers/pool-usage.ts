import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface ProviderPoolUsage {
  /** Active sessions on the provider. */
  activeSessions: number;
  pool: { total: number; enabled: number; inUse: number };
}

const REFRESH_MS = 5_000;
const EMPTY: ProviderPoolUsage = { activeSessions: 0, pool: { total: 0, enabled: 0, inUse: 0 } };

/**
 * Active sessions and pool use per provider, read from the database every few seconds and kept in
 * memory, so GET /v1/health/cpaas can show them without touching the database when polled.
 */
@Injectable()
export class PoolUsage implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PoolUsage.name);
  private usage = new Map<string, ProviderPoolUsage>();
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.refreshing;
  }

  of(provider: string): ProviderPoolUsage {
    return this.usage.get(provider) ?? EMPTY;
  }

  refresh(): Promise<void> {
    this.refreshing ??= this.read()
      .catch((error: unknown) => this.logger.warn(`pool usage not refreshed: ${(error as Error).message}`))
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const numbers: Array<{ provider: string; total: number; enabled: number }> = await this.dataSource.query(
      `SELECT provider, count(*)::int AS total, (count(*) FILTER (WHERE enabled))::int AS enabled FROM proxy_numbers GROUP BY provider`,
    );
    const sessions: Array<{ provider: string; active: number; in_use: number }> = await this.dataSource.query(
      `SELECT provider, count(*)::int AS active, count(DISTINCT proxy_number_id)::int AS in_use
         FROM sessions WHERE status = 'active' AND expires_at > now() GROUP BY provider`,
    );
    const usage = new Map<string, ProviderPoolUsage>();
    for (const n of numbers) usage.set(n.provider, { activeSessions: 0, pool: { total: n.total, enabled: n.enabled, inUse: 0 } });
    for (const s of sessions) {
      const entry = usage.get(s.provider) ?? { activeSessions: 0, pool: { total: 0, enabled: 0, inUse: 0 } };
      usage.set(s.provider, { activeSessions: s.active, pool: { ...entry.pool, inUse: s.in_use } });
    }
    this.usage = usage;
  }
}
