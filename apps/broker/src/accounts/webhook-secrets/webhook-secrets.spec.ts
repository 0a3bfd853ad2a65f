/**
 * An account's webhook secrets against a real PostgreSQL, time moved by hand: the first secret made with
 * the account (and by the migration for older accounts), each secret shown once, and the previous secret
 * signing for exactly WEBHOOK_SECRET_OVERLAP_MS after a rotation.
 */
import { DataSource } from 'typeorm';
import type { MigrationInterface } from 'typeorm';
import { MIGRATIONS, brokerDataSourceOptions } from '@app/database';
import { constructEvent } from '@app/sdk';
import { createTestDatabase, type TestDatabase, ManualClock } from '@app/testing';
import { AccountRepository } from '../account.repository';
import { AccountsService } from '../accounts.service';
import { loadConfig } from '../../config';
import { ENTITIES } from '../../entities';
import type { ClaimedDelivery } from '../../notifications/delivery/delivery-store';
import { SignedRequestPreparer } from '../../notifications/delivery/signed-request';
import { WebhookSecretRepository } from './webhook-secret.repository';
import { WebhookSecrets } from './webhook-secrets';

const T0 = Date.UTC(2026, 6, 15, 12, 0, 0);
const DAY = 24 * 60 * 60 * 1000;

describe('WebhookSecrets', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let clock: ManualClock;
  let secrets: WebhookSecrets;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 4 })).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await db.drop();
  });
  beforeEach(() => {
    clock = new ManualClock(T0);
    secrets = new WebhookSecrets(new WebhookSecretRepository(dataSource), DAY, clock);
  });

  async function bareAccount(): Promise<string> {
    const [row] = (await dataSource.query("INSERT INTO accounts (name) VALUES ('acme') RETURNING id")) as Array<{ id: string }>;
    return row.id;
  }

  async function currentSecrets(accountId: string): Promise<Array<{ secret: string; revealed_at: Date | null }>> {
    return (await dataSource.query('SELECT secret, revealed_at FROM webhook_secrets WHERE account_id = $1 AND expires_at IS NULL', [
      accountId,
    ])) as Array<{ secret: string; revealed_at: Date | null }>;
  }

  it('makes the first secret with the account: shown in the answer that made it, never again', async () => {
    const accounts = new AccountsService(new AccountRepository(dataSource), loadConfig({}));
    const { account, webhookSecret } = await accounts.createAccount('acme rides');
    expect(webhookSecret.secret).toMatch(/^whsec_/);
    expect(await currentSecrets(account.id)).toEqual([{ secret: webhookSecret.secret, revealed_at: expect.any(Date) }]);
    expect(await secrets.status(account.id)).toMatchObject({ configured: true, revealed: true });
    expect(await secrets.reveal(account.id)).toBeNull();
    // It is the one that signs.
    expect(await secrets.signingSecrets(account.id)).toEqual([webhookSecret.secret]);
  });

  it('gives an account from BROKER_API_KEY a secret nobody saw yet: the first reveal shows it, once', async () => {
    const accounts = new AccountsService(new AccountRepository(dataSource), loadConfig({ BROKER_API_KEY: 'secrets-spec-key-0001' }));
    await accounts.onApplicationBootstrap();
    const [{ account_id: accountId }] = (await dataSource.query(
      "SELECT account_id FROM api_keys WHERE label = 'BROKER_API_KEY'",
    )) as Array<{
      account_id: string;
    }>;
    const [made] = await currentSecrets(accountId);
    expect(made).toEqual({ secret: expect.stringMatching(/^whsec_/), revealed_at: null });
    expect(await secrets.status(accountId)).toMatchObject({ configured: true, revealed: false });

    const revealed = await secrets.reveal(accountId);
    expect(revealed).toEqual({ secret: made.secret, createdAt: expect.any(String), previousSecretExpiresAt: null });
    expect(await secrets.reveal(accountId)).toBeNull();
    expect(await secrets.status(accountId)).toMatchObject({ revealed: true });
  });

  it('the migration gives each older account a secret, readable once; one that had a secret keeps it, readable once', async () => {
    const without = await bareAccount();
    const withOne = await bareAccount();
    await dataSource.query("INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, 'whsec_ZXhpc3Rpbmc=', now())", [
      withOne,
    ]);
    // The schema before the migration, then the migration itself.
    await dataSource.query('ALTER TABLE webhook_secrets DROP COLUMN revealed_at');
    const runner = dataSource.createQueryRunner();
    try {
      const Migration = MIGRATIONS.find((m) => m.name === 'WebhookSecretAtCreation1796073688584') as new () => MigrationInterface;
      await new Migration().up(runner);
    } finally {
      await runner.release();
    }

    const [made] = await currentSecrets(without);
    expect(made).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), revealed_at: null });
    expect(await currentSecrets(withOne)).toEqual([{ secret: 'whsec_ZXhpc3Rpbmc=', revealed_at: null }]);
    expect((await secrets.reveal(without))?.secret).toBe(made.secret);
    expect((await secrets.reveal(withOne))?.secret).toBe('whsec_ZXhpc3Rpbmc=');
    expect(await secrets.reveal(without)).toBeNull();
  });

  it('after a rotation the previous secret signs for 24 h and not after', async () => {
    const accounts = new AccountsService(new AccountRepository(dataSource), loadConfig({}));
    const { account, webhookSecret } = await accounts.createAccount('rotating');
    const preparer = new SignedRequestPreparer(secrets, undefined);
    const delivery = {
      id: 'dlv_rotation',
      kind: 'account',
      accountId: account.id,
      eventId: 'evt_rotation',
      type: 'session.created',
      eventCreatedAt: new Date(T0),
      data: {},
    } as unknown as ClaimedDelivery;
    const signedBy = async (at: number): Promise<string[]> => {
      clock.set(at);
      const { body, headers } = await preparer.prepare(delivery, at);
      const verifies = (secret: string) => {
        try {
          constructEvent(body, headers, secret, { now: at });
          return true;
        } catch {
          return false;
        }
      };
      return [webhookSecret.secret, rotated.secret].filter(verifies);
    };

    clock.set(T0);
    const rotated = await secrets.rotate(account.id);
    expect(Date.parse(rotated.previousSecretExpiresAt!)).toBe(T0 + DAY);
    expect(await signedBy(T0)).toEqual([webhookSecret.secret, rotated.secret]);
    expect(await signedBy(T0 + DAY - 1)).toEqual([webhookSecret.secret, rotated.secret]);
    expect(await signedBy(T0 + DAY)).toEqual([rotated.secret]);
    expect(await signedBy(T0 + DAY + 60_000)).toEqual([rotated.secret]);
    // The rotated secret was shown in the rotation's answer: not revealed again.
    expect(await secrets.reveal(account.id)).toBeNull();
  });
});
