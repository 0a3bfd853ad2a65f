/**
 * The SQL of accounts and their API keys. Keys arrive hashed; rows come back as the entities
 * (Account, ApiKey), which are the typed rows of these tables. AccountsService decides what is allowed.
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { createFirstWebhookSecret } from './webhook-secrets/webhook-secrets';
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
   * Makes the account of a configured key (BROKER_API_KEY) unless the key exists, or brings it back if a
   * start revoked it for being no longer listed. An operator's revocation stands. Replicas starting together
   * race here: they serialise on the key's hash.
   */
  ensureConfiguredKey(accountName: string, key: NewApiKey): Promise<'created' | 'exists' | 'restored' | 'revoked-by-operator'> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key.keyHash]);
      const keys = manager.getRepository(ApiKey);
      const existing = await keys.findOne({ where: { keyHash: key.keyHash } });
      if (existing?.revokedBy === 'operator') return 'revoked-by-operator';
      if (existing?.revokedBy === 'removed-from-environment') {
        await keys.update({ id: existing.id }, { revokedAt: null, revokedBy: null });
        return 'restored';
      }
      if (existing) return 'exists';
      const account = await manager.getRepository(Account).save({ name: accountName, defaultCallbackUrl: null });
      await keys.save({ accountId: account.id, ...key, revokedAt: null, fromEnvironment: true });
      // Nobody is there to see it now: the account reads it once (PUT callback-url, or the reveal).
      await createFirstWebhookSecret(manager, account.id, account.createdAt, false);
      return 'created';
    });
  }

  /** Revokes, at `at`, the live keys made from BROKER_API_KEY whose hash it no longer lists; answers their prefixes. */
  async revokeUnlistedEnvironmentKeys(listed: string[], at: Date): Promise<string[]> {
    const [rows] = (await this.dataSource.query(
      `UPDATE api_keys SET revoked_at = $2, revoked_by = 'removed-from-environment'
        WHERE from_environment AND revoked_at IS NULL AND key_hash <> ALL($1::text[])
        RETURNING key_prefix`,
      [listed, at.toISOString()],
    )) as [Array<{ key_prefix: string }>, number];
    return rows.map((r) => r.key_prefix);
  }

  addKey(accountId: string, key: NewApiKey): Promise<ApiKey> {
    return this.dataSource.getRepository(ApiKey).save({ accountId, ...key, revokedAt: null });
  }

  /** An operator revokes a live key at `at`; false when there was none. */
  async revokeKey(id: string, at: Date): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(ApiKey)
      .update({ id, revokedAt: IsNull() }, { revokedAt: at, revokedBy: 'operator' });
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
