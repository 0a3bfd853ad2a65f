/**
 * Jest global setup: a real PostgreSQL for the whole run. With DATABASE_URL set, tests create their
 * databases on that server; otherwise a throwaway local server is started under the OS temp folder
 * (never in the checkout, which the `postgres` user may not be able to enter).
 *
 * Jest loads this file outside its module map, hence the relative import.
 */
import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalPostgres } from '../../database/src';
import { ADMIN_URL_VARIABLE } from './test-env';

declare global {
  var __testPostgres: LocalPostgres | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) {
    process.env[ADMIN_URL_VARIABLE] = process.env.DATABASE_URL;
    return;
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'session-broker-test-'));
  await chmod(dataDir, 0o755);
  // Throwaway data: durability traded for speed.
  const server = await LocalPostgres.start({
    dataDir,
    ephemeral: true,
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
  });
  globalThis.__testPostgres = server;
  process.env[ADMIN_URL_VARIABLE] = server.adminUrl;
}
