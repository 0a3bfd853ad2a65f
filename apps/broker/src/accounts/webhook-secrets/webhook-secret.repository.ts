/**
 * The SQL of an account's webhook signing secrets (`webhook_secrets`). Every time is the caller's clock,
 * passed in; nothing here reads now(). `WebhookSecrets` decides what to make, show or retire.
 */
import type { DataSource, EntityManager } from 'typeorm';

/** A secret that still signs: the current one (no expiry) or a previous one inside its overlap. */
export interface LiveWebhookSecret {
  readonly secret: string;
  readonly createdAt: Date;
  /** Null for the current secret. */
  readonly expiresAt: Date | null;
  readonly revealedAt: Date | null;
}

interface SecretRow {
  secret: string;
  created_at: Date;
  expires_at: Date | null;
  revealed_at: Date | null;
}

/**
 * Records a new current secret inside the caller's transaction (the one that makes the account).
 * `revealedAt`: when it was shown, or null if the first reveal shows it.
 */
export async function insertWebhookSecret(
  manager: EntityManager,
  accountId: string,
  secret: string,
  createdAt: Date,
  revealedAt: Date | null,
): Promise<void> {
  await manager.query('INSERT INTO webhook_secrets (account_id, secret, created_at, revealed_at) VALUES ($1, $2, $3, $4)', [
    accountId,
    secret,
    createdAt.toISOString(),
    revealedAt?.toISOString() ?? null,
  ]);
}

export class WebhookSecretRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The account's live secrets at `now`: the current one first, then previous ones, newest first. */
  async live(accountId: string, now: Date): Promise<LiveWebhookSecret[]> {
    const rows = await this.dataSource.query<SecretRow[]>(
      `SELECT secret, created_at, expires_at, revealed_at FROM webhook_secrets
        WHERE account_id = $1 AND (expires_at IS NULL OR expires_at > $2)
        ORDER BY (expires_at IS NULL) DESC, created_at DESC`,
      [accountId, now.toISOString()],
    );
    return rows.map((r) => ({ secret: r.secret, createdAt: r.created_at, expiresAt: r.expires_at, revealedAt: r.revealed_at }));
  }

  /** Records `secret` as the account's current one (not yet shown) unless it has one. */
  async insertCurrentIfNone(accountId: string, secret: string, createdAt: Date): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (account_id) WHERE expires_at IS NULL DO NOTHING`,
      [accountId, secret, createdAt.toISOString()],
    );
  }

  async accountExists(accountId: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>('SELECT 1 FROM accounts WHERE id = $1', [accountId]);
    return rows.length > 0;
  }

  /** Marks the current secret shown at `at` if it never was; returns it then, null otherwise. */
  async markCurrentRevealed(accountId: string, at: Date): Promise<{ secret: string; createdAt: Date } | null> {
    const [rows] = await this.dataSource.query<[Array<Pick<SecretRow, 'secret' | 'created_at'>>, number]>(
      `UPDATE webhook_secrets SET revealed_at = $2
        WHERE account_id = $1 AND expires_at IS NULL AND revealed_at IS NULL
        RETURNING secret, created_at`,
      [accountId, at.toISOString()],
    );
    const [row] = rows;
    return row ? { secret: row.secret, createdAt: row.created_at } : null;
  }

  /**
   * In one transaction (rotations of one account take turns): drops the previous secrets, makes the current
   * one previous until `previousExpiresAt`, and records `secret` as the new current one, shown at `at`.
   * Returns whether there was a current secret to retire.
   */
  async rotate(accountId: string, secret: string, at: Date, previousExpiresAt: Date): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      await manager.query('DELETE FROM webhook_secrets WHERE account_id = $1 AND expires_at IS NOT NULL', [accountId]);
      const [retired] = await manager.query<[Array<{ id: string }>, number]>(
        'UPDATE webhook_secrets SET expires_at = $2 WHERE account_id = $1 AND expires_at IS NULL RETURNING id',
        [accountId, previousExpiresAt.toISOString()],
      );
      // Shown in the rotation's answer: never revealed again.
      await insertWebhookSecret(manager, accountId, secret, at, at);
      return retired.length > 0;
    });
  }
}
