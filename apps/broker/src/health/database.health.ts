import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { DatabaseServerRepository } from './database-server.repository';

/**
 * Readiness of the database: a server that takes writes answered within the timeout. Behind HAProxy and
 * Patroni (docs/operations.md#past-one-database-server) that is the current leader; a standby answers
 * too but refuses every write, and during a failover HAProxy may reach the promoted node a moment
 * before its promotion has finished, so a server in recovery (or read-only) counts as down.
 */
@Injectable()
export class DatabaseHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly server: DatabaseServerRepository,
  ) {}

  async check(key: string, timeoutMs: number): Promise<HealthIndicatorResult> {
    const indicator = this.health.check(key);
    let timer: NodeJS.Timeout | undefined;
    try {
      const state = await Promise.race([
        this.server.state(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (state.inRecovery) return indicator.down({ message: 'the server reached is a standby (in recovery): no leader' });
      if (state.readOnly) return indicator.down({ message: 'the server reached takes no writes (read-only)' });
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }
}
