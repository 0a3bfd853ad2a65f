/**
 * Each account's signing secrets. An account's first secret is made the first time one is needed (its
 * first signed delivery, or setting a default callback URL) and is shown only then, through the request
 * that made it; a rotation makes a new one, shows it once, and keeps the previous one signing for
 * WEBHOOK_SECRET_OVERLAP_MS (24 h). Signing reads them through a cache of one second, dropped locally on
 * rotation, so another replica picks up a rotation within that second.
 */
import type { DataSource } from 'typeorm';
import type { Clock } from '../clock';
import { newWebhookSecret } from '../signature';

const CACHE_TTL_MS = 1_000;
const CACHE_MAX = 10_000;

export interface SecretStatus {
  configured: boolean;
  createdAt: string | null;
  previousSecretExpiresAt: string | null;
}

export interface RotatedSecret {
  secret: string;
  createdAt: string;
  previousSecretExpiresAt: string | null;
}

export class WebhookSecrets {
  private readonly cache = new Map<string, { secrets: string[]; until: number }>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly overlapMs: number,
    private readonly clock: Clock,
  ) {}

  /** The secrets that sign the account's webhooks now, newest first; makes the first one if there is none. */
  async signingSecrets(accountId: string): Promise<string[]> {
    const now = this.clock.now();
    const cached = this.cache.get(accountId);
    if (cached && cached.until > now) return cached.secrets;
    let secrets = await this.read(accountId, now);
    if (secrets.length === 0 || secrets[0].current === false) {
      await this.ensureCurrent(accountId);
      secrets = await this.read(accountId, now);
    }
    const list = secrets.map((s) => s.secret);
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    // Never kept past the previous secret's expiry: it stops signing at the end of the overlap, not a cache later.
    const expiries = secrets.flatMap((s) => (s.expiresAt ? [s.expiresAt.getTime()] : []));
    this.cache.set(accountId, { secrets: list, until: Math.min(now + CACHE_TTL_MS, ...expiries) });
    return list;
  }

  /** Makes the account's current secret if it has none. Returns it only when this call made it. */
  async ensureCurrent(accountId: string): Promise<{ secret: string; createdAt: string } | null> {
    const createdAt = new Date(this.clock.now()).toISOString();
    const rows = (await this.dataSource.query(
      `INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (account_id) WHERE expires_at IS NULL DO NOTHING
       RETURNING secret`,
      [accountId, newWebhookSecret(), createdAt],
    )) as Array<{ secret: string }>;
    return rows.length > 0 ? { secret: rows[0].secret, createdAt } : null;
  }

  /** A new current secret, returned this once; the previous one signs for the overlap, any older one stops now. */
  async rotate(accountId: string): Promise<RotatedSecret> {
    const now = this.clock.now();
    const result = await this.dataSource.transaction(async (manager) => {
      // Rotations of one account take turns.
      await manager.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      await manager.query('DELETE FROM webhook_secrets WHERE account_id = $1 AND expires_at IS NOT NULL', [accountId]);
      const previousExpiresAt = new Date(now + this.overlapMs).toISOString();
      const [retired] = (await manager.query(
        'UPDATE webhook_secrets SET expires_at = $2 WHERE account_id = $1 AND expires_at IS NULL RETURNING id',
        [accountId, previousExpiresAt],
      )) as [unknown[], number];
      const secret = newWebhookSecret();
      const createdAt = new Date(now).toISOString();
      await manager.query('INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, $3)', [
        accountId,
        secret,
        createdAt,
      ]);
      return { secret, createdAt, previousSecretExpiresAt: retired.length > 0 ? previousExpiresAt : null };
    });
    this.cache.delete(accountId);
    return result;
  }

  async status(accountId: string): Promise<SecretStatus> {
    const rows = await this.read(accountId, this.clock.now());
    const current = rows.find((r) => r.current);
    const previous = rows.find((r) => !r.current);
    return {
      configured: current !== undefined,
      createdAt: current?.createdAt.toISOString() ?? null,
      previousSecretExpiresAt: previous?.expiresAt?.toISOString() ?? null,
    };
  }

  private async read(
    accountId: string,
    now: number,
  ): Promise<Array<{ secret: string; current: boolean; createdAt: Date; expiresAt: Date | null }>> {
    const rows = (await this.dataSource.query(
      `SELECT secret, created_at, expires_at FROM webhook_secrets
        WHERE account_id = $1 AND (expires_at IS NULL OR expires_at > $2)
        ORDER BY (expires_at IS NULL) DESC, created_at DESC`,
      [accountId, new Date(now).toISOString()],
    )) as Array<{ secret: string; created_at: Date; expires_at: Date | null }>;
    return rows.map((r) => ({ secret: r.secret, current: r.expires_at === null, createdAt: r.created_at, expiresAt: r.expires_at }));
  }
}
