import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS, brokerDataSourceOptions, runMigrations } from '@app/database';
import { testAdminUrl } from './test-env';

export interface TestDatabase {
  /** Connection URL of this test file's own database. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Names the template after the migrations it holds, so a changed migration list builds a new one. */
const TEMPLATE = `broker_template_${createHash('sha256')
  .update(MIGRATIONS.map((m) => m.name).join(','))
  .digest('hex')
  .slice(0, 12)}`;
const TEMPLATE_LOCK_KEY = 7_240_002;

/**
 * A fresh, fully migrated database for one test file: a copy of a template database that is
 * migrated once per server (the first worker to need it builds it under an advisory lock).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = testAdminUrl();
  await ensureTemplate(adminUrl);
  const name = `test_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`));
  const url = withDatabase(adminUrl, name);
  return {
    url,
    name,
    drop: () => withAdmin(adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

async function ensureTemplate(adminUrl: string): Promise<void> {
  await withAdmin(adminUrl, async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE]);
      if (found.rowCount) return;
      const building = `${TEMPLATE}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const dataSource = new DataSource(brokerDataSourceOptions({ url: withDatabase(adminUrl, building), entities: [], poolSize: 2 }));
      await dataSource.initialize();
      try {
        await runMigrations(dataSource);
      } finally {
        await dataSource.destroy();
      }
      // Renamed only once complete: a half-built template is never cloned.
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${TEMPLATE}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  });
}

async function withAdmin<T>(adminUrl: string, work: (admin: Client) => Promise<T>): Promise<T> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
