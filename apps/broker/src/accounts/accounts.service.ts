import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { systemClock, type Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import type { Account } from './account.entity';
import { AccountRepository, type NewApiKey } from './account.repository';
import { apiKeyPrefix, hashApiKey, newApiKey } from './api-key-hash';
import type { ApiKey } from './api-key.entity';

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
    private readonly accounts: AccountRepository,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  /**
   * BROKER_API_KEY (or npm start's development key): each listed key exists, with an account of its own, from
   * start-up on; a key made from it that it no longer lists is revoked (and comes back if listed again), each said
   * in the log. A key an operator revoked stays revoked, listed or not.
   */
  async onApplicationBootstrap(): Promise<void> {
    const from = this.config.apiKeysFrom ?? { label: 'BROKER_API_KEY', description: 'BROKER_API_KEY' };
    for (const key of this.config.apiKeys) {
      const prefix = apiKeyPrefix(key);
      const outcome = await this.accounts.ensureConfiguredKey(`account-${prefix}`, stored(key, from.label));
      if (outcome === 'created') this.logger.log(`created account and API key ${prefix}… from ${from.description}`);
      if (outcome === 'restored') this.logger.log(`API key ${prefix}… is configured again (${from.description}): it works again`);
      if (outcome === 'revoked-by-operator')
        this.logger.warn(`API key ${prefix}… is configured (${from.description}) but was revoked by an operator: it stays revoked`);
    }
    const revoked = await this.accounts.revokeUnlistedEnvironmentKeys(this.config.apiKeys.map(hashApiKey), new Date(this.clock.now()));
    for (const prefix of revoked) this.logger.warn(`revoked API key ${prefix}…: no longer configured (${from.description})`);
  }

  async authenticate(key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    const now = this.clock.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached.principal;
    const row = await this.accounts.findLiveKey(hash);
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
    const key = newApiKey();
    return { key, ...(await this.accounts.createWithKey(name, stored(key, label ?? null), true)) };
  }

  /** A fresh key for the account, returned once; null when there is no such account. */
  async createKey(accountId: string, label?: string): Promise<{ key: string; apiKey: ApiKey } | null> {
    if (!(await this.accounts.find(accountId))) return null;
    const key = newApiKey();
    return { key, apiKey: await this.accounts.addKey(accountId, stored(key, label ?? null)) };
  }

  /** Revokes the key (requests with it are refused within CACHE_TTL_MS); the key as it is now, or null when unknown. */
  async revokeKey(apiKeyId: string): Promise<ApiKey | null> {
    await this.accounts.revokeKey(apiKeyId, new Date(this.clock.now()));
    this.cache.clear();
    return this.accounts.findKey(apiKeyId);
  }

  list(): Promise<Array<{ account: Account; keys: ApiKey[] }>> {
    return this.accounts.listWithKeys();
  }

  /** Sets the account's destination countries (null: the pool's) and special-rate permission; null when there is no such account. */
  async setDestinations(
    accountId: string,
    allowedCountries: string[] | null | undefined,
    allowSpecialRate: boolean | undefined,
  ): Promise<{ account: Account; keys: ApiKey[] } | null> {
    const countries = allowedCountries ? [...new Set(allowedCountries)].sort() : allowedCountries;
    const account = await this.accounts.setDestinations(accountId, countries, allowSpecialRate);
    return account ? { account, keys: await this.accounts.keysOf(accountId) } : null;
  }

  /** The account's default country (null: participants are E.164 only). */
  async defaultCountry(accountId: string): Promise<string | null> {
    return (await this.accounts.find(accountId))?.defaultCountry ?? null;
  }

  async setDefaultCountry(accountId: string, country: string | null): Promise<string | null> {
    return this.accounts.setDefaultCountry(accountId, country);
  }
}

function stored(key: string, label: string | null): NewApiKey {
  return { keyHash: hashApiKey(key), keyPrefix: apiKeyPrefix(key), label };
}
