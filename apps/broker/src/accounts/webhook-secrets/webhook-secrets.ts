/**
 * Each account's signing secrets. An account's first secret is made with the account (and, for accounts
 * older than that rule, by the migration `WebhookSecretAtCreation`); each secret is shown once: by the
 * request that made it (account creation through the admin API or CLI, a rotation), or else by the first
 * `reveal` (`POST /v1/account/webhook-secret/reveal`, its admin twin, or the first `PUT
 * /v1/account/callback-url` that finds it unseen). A rotation makes a new one, shows it once, and keeps
 * the previous one signing for WEBHOOK_SECRET_OVERLAP_MS (24 h). Signing reads them through a cache of one
 * second, dropped locally on rotation, so another replica picks up a rotation within that second.
 */
import type { EntityManager } from 'typeorm';
import { newWebhookSecret } from '@app/sdk';
import type { Clock } from '@app/clock';
import { ProblemException } from '../../common/problem';
import { insertWebhookSecret, type LiveWebhookSecret, type WebhookSecretRepository } from './webhook-secret.repository';

const CACHE_TTL_MS = 1_000;
const CACHE_MAX = 10_000;

interface SecretStatus {
  configured: boolean;
  /** Whether the current secret was shown; false: `reveal` shows it once. */
  revealed: boolean;
  createdAt: string | null;
  previousSecretExpiresAt: string | null;
}

/** The answer to a reveal of a secret that was already shown. */
export function secretAlreadyShown(): ProblemException {
  return new ProblemException({
    status: 409,
    slug: 'webhook-secret-already-shown',
    title: 'Webhook secret already shown',
    detail:
      'The current webhook secret was already shown once and is not shown again; rotate it (POST /v1/account/webhook-secret/rotate) for a new one.',
  });
}

/** The current secret, shown by a reveal. */
interface RevealedSecret {
  secret: string;
  createdAt: string;
  previousSecretExpiresAt: string | null;
}

/**
 * Makes a new account's first secret in the transaction that makes the account. `shown`: the caller
 * returns it in its answer (so it is not revealed again); otherwise the first reveal shows it.
 */
export async function createFirstWebhookSecret(
  manager: EntityManager,
  accountId: string,
  at: Date,
  shown: boolean,
): Promise<{ secret: string; createdAt: string }> {
  const secret = newWebhookSecret();
  await insertWebhookSecret(manager, accountId, secret, at, shown ? at : null);
  return { secret, createdAt: at.toISOString() };
}

interface RotatedSecret {
  secret: string;
  createdAt: string;
  previousSecretExpiresAt: string | null;
}

export class WebhookSecrets {
  private readonly cache = new Map<string, { secrets: string[]; until: number }>();

  constructor(
    private readonly repository: WebhookSecretRepository,
    private readonly overlapMs: number,
    private readonly clock: Clock,
  ) {}

  /** The secrets that sign the account's webhooks now, newest first; makes the first one if there is none. */
  async signingSecrets(accountId: string): Promise<string[]> {
    const now = this.clock.now();
    const cached = this.cache.get(accountId);
    if (cached && cached.until > now) return cached.secrets;
    let secrets = await this.repository.live(accountId, new Date(now));
    if (secrets.length === 0 || secrets[0].expiresAt !== null) {
      await this.ensureCurrent(accountId);
      secrets = await this.repository.live(accountId, new Date(now));
    }
    const list = secrets.map((s) => s.secret);
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    // Never past a previous secret's end: it stops signing at its expiry, not up to a cache lifetime later.
    const ends = secrets.map((s) => s.expiresAt?.getTime() ?? Infinity);
    this.cache.set(accountId, { secrets: list, until: Math.min(now + CACHE_TTL_MS, ...ends) });
    return list;
  }

  /**
   * Makes the account's current secret if it has none (not yet shown). Every account gets one with the
   * account; this keeps signing safe for one made some other way (a row inserted by hand).
   */
  async ensureCurrent(accountId: string): Promise<void> {
    await this.repository.insertCurrentIfNone(accountId, newWebhookSecret(), new Date(this.clock.now()));
  }

  /** Whether the account exists (an operator may name any id). */
  accountExists(accountId: string): Promise<boolean> {
    return this.repository.accountExists(accountId);
  }

  /**
   * The current secret, if it was never shown: marks it shown and returns it, this once. Null when it was
   * already shown (a rotation is then the way to a secret the caller can read).
   */
  async reveal(accountId: string): Promise<RevealedSecret | null> {
    await this.ensureCurrent(accountId);
    const shown = await this.repository.markCurrentRevealed(accountId, new Date(this.clock.now()));
    if (!shown) return null;
    const { previousSecretExpiresAt } = await this.status(accountId);
    return { secret: shown.secret, createdAt: shown.createdAt.toISOString(), previousSecretExpiresAt };
  }

  /** A new current secret, returned this once; the previous one signs for the overlap, any older one stops now. */
  async rotate(accountId: string): Promise<RotatedSecret> {
    const now = this.clock.now();
    const secret = newWebhookSecret();
    const previousExpiresAt = new Date(now + this.overlapMs);
    const retired = await this.repository.rotate(accountId, secret, new Date(now), previousExpiresAt);
    this.cache.delete(accountId);
    return {
      secret,
      createdAt: new Date(now).toISOString(),
      previousSecretExpiresAt: retired ? previousExpiresAt.toISOString() : null,
    };
  }

  async status(accountId: string): Promise<SecretStatus> {
    const rows: LiveWebhookSecret[] = await this.repository.live(accountId, new Date(this.clock.now()));
    const current = rows.find((r) => r.expiresAt === null);
    const previous = rows.find((r) => r.expiresAt !== null);
    return {
      configured: current !== undefined,
      revealed: current !== undefined && current.revealedAt !== null,
      createdAt: current?.createdAt.toISOString() ?? null,
      previousSecretExpiresAt: previous?.expiresAt?.toISOString() ?? null,
    };
  }
}
