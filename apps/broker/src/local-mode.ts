/**
 * The all-local `npm start` (no DATABASE_URL, no PROVIDERS): what it sets up so that a new user has
 * nothing to guess. An admin token made once and kept beside the development API key, and start-up
 * lines that say what this mode allows that a production setup does not.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BrokerConfig } from './config';

export function isAllLocal(config: Pick<BrokerConfig, 'simulated' | 'databaseUrl'>): boolean {
  return config.simulated && !config.databaseUrl;
}

/** An admin token for the all-local mode when ADMIN_TOKEN is unset: made once, kept in DATA_DIR/dev-admin-token. */
export async function developmentAdminToken(config: BrokerConfig): Promise<{ token: string; file: string } | undefined> {
  if (!isAllLocal(config) || config.adminToken) return undefined;
  const file = join(resolve(config.dataDir), 'dev-admin-token');
  const saved = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (saved) return { token: saved, file };
  const token = `adm_dev_${randomBytes(24).toString('base64url')}`;
  // Unwritable: this run still works, with a token that lasts until it stops.
  await writeFile(file, `${token}\n`, { mode: 0o600 }).catch(() => undefined);
  return { token, file };
}

/** What the all-local mode allows, said at start-up. */
export function localModeLines(config: BrokerConfig): string[] {
  if (!isAllLocal(config) || !config.notifications.allowPrivateTargets) return [];
  return [
    'callback URLs may point to this machine (loopback and private addresses: all-local mode; WEBHOOK_ALLOW_PRIVATE_TARGETS=false refuses them, and a setup with DATABASE_URL or PROVIDERS refuses them unless it is true)',
  ];
}
