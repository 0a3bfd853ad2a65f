/**
 * The SQL of accounts and their API keys. Keys arrive hashed; rows come back as the entities
 * (Account, ApiKey), which are the typed rows of these tables. AccountsService decides what is allowed.
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { createFirstWebhookSecret } from '../notifications/secrets/webhook-secrets';
import { Account } from './account.entity';
import { ApiKey } from './api-key.entity';

/** A key to store: its hash and its shown prefix, never the key. */
export interface NewApiKey {
  keyHash: string;
  keyPrefix: string;
  label: string | null;
}

@Injectable()
export class AccountRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The live (not revoked) key with this hash, as its id and account. */
  async findLiveKey(keyHash: string): Promise<{ id: string; accountId: string } | null> {
    return this.dataSource
      .getRepository(ApiKey)
      .findOne({ where: { keyHash, revokedAt: IsNull() }, select: { id: true, accountId: true } });
  }

  /** An account with its first key and first webhook secret (`secretShown`: whether it is handed out now), in one transaction. */
  createWithKey(
    name: string,
    key: NewApiKey,
    secretShown: boolean,
  ): Promise<{ account: Account; apiKey: ApiKey; webhookSecret: { secret: string; createdAt: string } }> {
    return this.dataSource.transaction(async (manager) => {
      const account = await manager.getRepository(Account).save({ name, defaultCallbackUrl: null });
      const apiKey = await manager.getRepository(ApiKey).save({ accountId: account.id, ...key, revokedAt: null });
      const webhookSecret = await createFirstWebhookSecret(manager, account.id, account.createdAt, secretShown);
      return { account, apiKey, webhookSecret };
    });
  }

  /**
   * Makes the account of a configured key (BROKER_API_KEY) unless the key exists; false when it did.
   * Replicas starting together race here: they serialise on the key's hash.
   */
  ensureConfiguredKey(accountName: string, key: NewApiKey): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key.keyHash]);
      if (await manager.getRepository(ApiKey).exists({ where: { keyHash: key.keyHash } })) return false;
      const account = await manager.getRepository(Account).save({ name: accountName, defaultCallbackUrl: null });
      await manager.getRepository(ApiKey).save({ accountId: account.id, ...key, revokedAt: null });
      // Nobody is there to see it now: the account reads it once (PUT callback-url, or the reveal).
      await createFirstWebhookSecret(manager, account.id, account.createdAt, false);
      return true;
    });
  }

  addKey(accountId: string, key: NewApiKey): Promise<ApiKey> {
    return this.dataSource.getRepository(ApiKey).save({ accountId, ...key, revokedAt: null });
  }

  /** Revokes a live key at `at`; false when there was none. */
  async revokeKey(id: string, at: Date): Promise<boolean> {
    const result = await this.dataSource.getRepository(ApiKey).update({ id, revokedAt: IsNull() }, { revokedAt: at });
    return (result.affected ?? 0) > 0;
  }

  findKey(id: string): Promise<ApiKey | null> {
    return this.dataSource.getRepository(ApiKey).findOne({ where: { id } });
  }

  find(id: string): Promise<Account | null> {
    return this.dataSource.getRepository(Account).findOne({ where: { id } });
  }

  /** Every account, oldest first, with its keys. */
  async listWithKeys(): Promise<Array<{ account: Account; keys: ApiKey[] }>> {
    const accounts = await this.dataSource.getRepository(Account).find({ order: { createdAt: 'ASC' } });
    const keys = await this.dataSource.getRepository(ApiKey).find({ order: { createdAt: 'ASC' } });
    return accounts.map((account) => ({ account, keys: keys.filter((k) => k.accountId === account.id) }));
  }

  keysOf(accountId: string): Promise<ApiKey[]> {
    return this.dataSource.getRepository(ApiKey).find({ where: { accountId }, order: { createdAt: 'ASC' } });
  }

  /** Sets what is given (undefined: unchanged); null when there is no such account. */
  async setDestinations(
    id: string,
    allowedCountries: string[] | null | undefined,
    allowSpecialRate: boolean | undefined,
  ): Promise<Account | null> {
    const accounts = this.dataSource.getRepository(Account);
    const account = await accounts.findOne({ where: { id } });
    if (!account) return null;
    if (allowedCountries !== undefined) account.allowedCountries = allowedCountries;
    if (allowSpecialRate !== undefined) account.allowSpecialRate = allowSpecialRate;
    return accounts.save(account);
  }

  async setDefaultCountry(id: string, country: string | null): Promise<string | null> {
    await this.dataSource.getRepository(Account).update({ id }, { defaultCountry: country });
    return country;
  }
}
