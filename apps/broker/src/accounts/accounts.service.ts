import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { systemClock, type Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { createFirstWebhookSecret } from '../notifications/secrets/webhook-secrets';
import { Account } from './account.entity';
import { apiKeyPrefix, hashApiKey, newApiKey } from './api-key-hash';
import { ApiKey } from './api-key.entity';

/** What a request is authenticated as. */
export interface Principal {
  accountId: string;
  apiKeyId: string;
}

const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

@Injectable()
export class AccountsService implements OnApplicationBootstrap {
  private readonly logger = new Logger(AccountsService.name);
  /** Key hash → principal (or null: unknown). Short-lived, so a revoked key stops working within seconds. */
  private readonly cache = new Map<string, { principal: Principal | null; until: number }>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  /** BROKER_API_KEY: each listed key exists, with an account of its own, from start-up on. */
  async onApplicationBootstrap(): Promise<void> {
    for (const key of this.config.apiKeys) {
      const created = await this.ensureKey(key, `account-${apiKeyPrefix(key)}`);
      if (created) this.logger.log(`created account and API key ${apiKeyPrefix(key)}… from BROKER_API_KEY`);
    }
  }

  async authenticate(key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    const now = this.clock.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached.principal;
    const row = await this.dataSource
      .getRepository(ApiKey)
      .findOne({ where: { keyHash: hash, revokedAt: IsNull() }, select: { id: true, accountId: true } });
    const principal = row ? { accountId: row.accountId, apiKeyId: row.id } : null;
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(hash, { principal, until: now + CACHE_TTL_MS });
    return principal;
  }

  /**
   * Makes an account with a fresh key and its first webhook secret; both are returned once (the key is
   * stored only hashed, the secret is marked shown).
   */
  async createAccount(
    name: string,
    label?: string,
  ): Promise<{ account: Account; key: string; apiKey: ApiKey; webhookSecret: { secret: string; createdAt: string } }> {
    return this.dataSource.transaction(async (manager) => {
      const account = await manager.getRepository(Account).save({ name, defaultCallbackUrl: null });
      const key = newApiKey();
      const apiKey = await manager
        .getRepository(ApiKey)
        .save({ accountId: account.id, keyHash: hashApiKey(key), keyPrefix: apiKeyPrefix(key), label: label ?? null, revokedAt: null });
      const webhookSecret = await createFirstWebhookSecret(manager, account.id, account.createdAt, true);
      return { account, key, apiKey, webhookSecret };
    });
  }

  async createKey(accountId: string, label?: string): Promise<{ key: string; apiKey: ApiKey }> {
    const key = newApiKey();
    const apiKey = await this.dataSource
      .getRepository(ApiKey)
      .save({ accountId, keyHash: hashApiKey(key), keyPrefix: apiKeyPrefix(key), label: label ?? null, revokedAt: null });
    return { key, apiKey };
  }

  async revokeKey(apiKeyId: string): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(ApiKey)
      .update({ id: apiKeyId, revokedAt: IsNull() }, { revokedAt: new Date(this.clock.now()) });
    this.cache.clear();
    return (result.affected ?? 0) > 0;
  }

  private async ensureKey(key: string, accountName: string): Promise<boolean> {
    const hash = hashApiKey(key);
    return this.dataSource.transaction(async (manager) => {
      // Replicas starting together race here: serialise on the key's hash.
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [hash]);
      const existing = await manager.getRepository(ApiKey).findOne({ where: { keyHash: hash } });
      if (existing) return false;
      const account = await manager.getRepository(Account).save({ name: accountName, defaultCallbackUrl: null });
      await manager
        .getRepository(ApiKey)
        .save({ accountId: account.id, keyHash: hash, keyPrefix: apiKeyPrefix(key), label: 'BROKER_API_KEY', revokedAt: null });
      // Nobody is there to see it now: the account reads it once (PUT callback-url, or the reveal).
      await createFirstWebhookSecret(manager, account.id, account.createdAt, false);
      return true;
    });
  }
}
