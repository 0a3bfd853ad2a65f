import type { DataSource } from 'typeorm';

/** Fixed key of the advisory lock that lets one replica at a time run migrations. */
const MIGRATION_LOCK_KEY = 7_240_001;

/**
 * Runs pending migrations, all in one transaction, under an advisory lock so replicas starting
 * together neither race nor fail: the second waits, then finds nothing left to run.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await dataSource.runMigrations({ transaction: 'all' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}

/**
 * The SQL that would bring the database in line with the entities: empty when the committed
 * migrations match them. This is what `migration:generate --check` computes.
 */
export async function pendingSchemaChanges(dataSource: DataSource): Promise<{ up: string[]; down: string[] }> {
  const log = await dataSource.driver.createSchemaBuilder().log();
  return {
    up: log.upQueries.map((q) => q.query),
    down: log.downQueries.map((q) => q.query),
  };
}
