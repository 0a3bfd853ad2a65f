import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { DataSource } from 'typeorm';

/** One statement on a pooled connection: is the server that answered one that takes writes? */
const WRITABLE_SQL = `SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') = 'on' AS read_only`;

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
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async check(key: string, timeoutMs: number): Promise<HealthIndicatorResult> {
    const indicator = this.health.check(key);
    let timer: NodeJS.Timeout | undefined;
    try {
      const [row] = await Promise.race([
        this.dataSource.query<Array<{ in_recovery: boolean; read_only: boolean }>>(WRITABLE_SQL),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (row.in_recovery) return indicator.down({ message: 'the server reached is a standby (in recovery): no leader' });
      if (row.read_only) return indicator.down({ message: 'the server reached takes no writes (read-only)' });
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }
}
