/**
 * The all-local `npm start` (no DATABASE_URL, no PROVIDERS): what it sets up so that a new user has
 * nothing to guess. An API key, an admin token and the simulator's webhook secret, each made once
 * and kept beside the data (owner-only), and start-up lines that say what this mode allows that a
 * production setup does not.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BrokerConfig } from '../../broker/src/config';

function isAllLocal(config: Pick<BrokerConfig, 'simulated' | 'databaseUrl'>): boolean {
  return config.simulated && !config.databaseUrl;
}

/**
 * An API key for the all-local mode when BROKER_API_KEY is unset, so a new user can create
 * sessions with no other setup: made once, kept in DATA_DIR/dev-api-key.
 */
export async function developmentApiKey(config: BrokerConfig): Promise<{ key: string; file: string } | undefined> {
  if (!isAllLocal(config) || config.apiKeys.length > 0) return undefined;
  const file = join(resolve(config.dataDir), 'dev-api-key');
  return { key: await keptSecret(file, () => `sk_dev_${randomBytes(18).toString('base64url')}`), file };
}

/** An admin token for the all-local mode when ADMIN_TOKEN is unset: made once, kept in DATA_DIR/dev-admin-token. */
export async function developmentAdminToken(config: BrokerConfig): Promise<{ token: string; file: string } | undefined> {
  if (!isAllLocal(config) || config.adminToken) return undefined;
  const file = join(resolve(config.dataDir), 'dev-admin-token');
  return { token: await keptSecret(file, () => `adm_dev_${randomBytes(24).toString('base64url')}`), file };
}

/**
 * The in-process simulator and the broker share a webhook secret made once per data folder, so
 * no published value can sign an inbound webhook (SIM_WEBHOOK_SECRET chooses one instead).
 */
export async function simulatorWebhookSecret(config: BrokerConfig): Promise<string> {
  await mkdir(resolve(config.dataDir), { recursive: true, mode: 0o700 }).catch(() => undefined);
  return keptSecret(join(resolve(config.dataDir), 'sim-webhook-secret'), () => randomBytes(32).toString('base64url'));
}

/** A secret read from `file`, or made and written there (owner-only) the first time. */
async function keptSecret(file: string, make: () => string): Promise<string> {
  const saved = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (saved) return saved;
  const secret = make();
  // Unwritable: this run still works, with a secret that lasts until it stops.
  await writeFile(file, `${secret}\n`, { mode: 0o600 }).catch(() => undefined);
  return secret;
}

/** What the all-local mode allows, said at start-up. */
export function localModeLines(config: BrokerConfig): string[] {
  if (!isAllLocal(config) || !config.notifications.allowPrivateTargets) return [];
  return [
    'callback URLs may point to this machine (loopback and private addresses: all-local mode; WEBHOOK_ALLOW_PRIVATE_TARGETS=false refuses them, and a setup with DATABASE_URL or PROVIDERS refuses them unless it is true)',
  ];
}
