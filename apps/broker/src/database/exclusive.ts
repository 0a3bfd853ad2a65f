import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/**
 * Advisory lock keys of the broker's scheduled jobs: each runs on one replica at a time. (7_240_101 was
 * the health probes' until the breaker leader took them over; not reused.)
 */
export const JOB_LOCKS = {
  sessionSweeper: 7_240_102,
  relayRetries: 7_240_103,
  idempotencyCleanup: 7_240_104,
  messageTextRetention: 7_240_105,
  /** Folding the pool's load changes into its totals (ProxyNumberRepository.poolUsage), one replica at a time. */
  poolUsageFold: 7_240_106,
} as const;

/**
 * Runs `work` only if this replica gets the advisory lock `key` now (`pg_try_advisory_lock`), and
 * releases it after; returns false without running when another replica holds it.
 */
export async function runExclusive(dataSource: DataSource, key: number, work: () => Promise<void>): Promise<boolean> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [key])) as Array<{ locked: boolean }>;
    if (!locked) return false;
    try {
      await work();
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [key]);
    }
    return true;
  } finally {
    await runner.release();
  }
}

/**
 * `runExclusive` on the app's data source, for the job runner to inject; one job at a time on this replica.
 * Each holds a pooled connection for its lock while its work takes others: five jobs due together on a small
 * pool (DATABASE_POOL_SIZE 3) held every connection for their locks, their work waited for one until the
 * pool's connect timeout, and every other statement of the replica with them (its breaker lease claims
 * too). One at a time, a job needs its lock's connection and its work's, whatever the pool.
 */
@Injectable()
export class AdvisoryLocks {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  runExclusive(key: number, work: () => Promise<void>): Promise<boolean> {
    const run = this.tail.then(() => runExclusive(this.dataSource, key, work));
    this.tail = run.catch(() => undefined);
    return run;
  }
}
