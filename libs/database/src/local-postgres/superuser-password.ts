/**
 * The local cluster's superuser password: random, made once per data folder and kept there in a file only
 * its owner reads (0600), so no other user of the machine can log in over 127.0.0.1 and read the webhook
 * secrets or add API keys. A data folder made before (every cluster then had the password `postgres`) is
 * moved over at its next start: the new password is written first, then set on the server, so a start
 * interrupted in between simply does it again.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from 'pg';
import { SUPERUSER } from './binaries';
import { LocalPostgresError } from './errors';

const PASSWORD_FILE = 'postgres-superuser-password';

/** The data folder's password, made (and written, owner-only) the first time. */
export async function superuserPassword(dataRoot: string): Promise<string> {
  const file = join(dataRoot, PASSWORD_FILE);
  const saved = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (saved) {
    // A copy or a restore may have widened it.
    await chmod(file, 0o600);
    return saved;
  }
  // Hex: safe in a connection URL as it is.
  const password = randomBytes(24).toString('hex');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/** The superuser's URL on `port` with `password`, for database `database`. */
export function superuserUrl(port: number, password: string, database = 'postgres'): string {
  return `postgres://${SUPERUSER.name}:${password}@127.0.0.1:${port}/${database}`;
}

/**
 * Makes sure the running server takes `password`: when it does not but the old built-in one still works
 * (a cluster made before per-folder passwords), the superuser's password is changed to it.
 */
export async function adoptPassword(port: number, password: string): Promise<void> {
  if (await authenticates(superuserUrl(port, password))) return;
  const legacy = new Client({ connectionString: superuserUrl(port, SUPERUSER.legacyPassword) });
  try {
    await legacy.connect();
  } catch (error) {
    throw new LocalPostgresError(
      `the PostgreSQL cluster on 127.0.0.1:${port} accepts neither the password in ${PASSWORD_FILE} nor the old built-in one: ${(error as Error).message}`,
    );
  }
  try {
    // No statement parameters in ALTER ROLE; the password is hex, so it is quoted safely as a literal.
    await legacy.query(`ALTER ROLE ${legacy.escapeIdentifier(SUPERUSER.name)} PASSWORD ${legacy.escapeLiteral(password)}`);
  } finally {
    await legacy.end().catch(() => undefined);
  }
}

async function authenticates(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '28P01') return false;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
