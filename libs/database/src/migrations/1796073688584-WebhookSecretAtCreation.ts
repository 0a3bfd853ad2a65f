import { randomBytes } from 'node:crypto';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An account's first webhook secret is made with the account (no longer on first need): every existing
 * account without a current secret gets one here, not yet shown. `revealed_at` records when the current
 * secret was shown (by the request that made it, or by the one-time reveal); a secret this migration finds
 * already current may have been made on a first delivery and never shown, so it is readable once too.
 */
export class WebhookSecretAtCreation1796073688584 implements MigrationInterface {
  name = 'WebhookSecretAtCreation1796073688584';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "webhook_secrets" ADD "revealed_at" TIMESTAMP WITH TIME ZONE');
    const accounts = (await queryRunner.query(
      `SELECT a.id FROM accounts a
        WHERE NOT EXISTS (SELECT 1 FROM webhook_secrets s WHERE s.account_id = a.id AND s.expires_at IS NULL)`,
    )) as Array<{ id: string }>;
    for (const { id } of accounts) {
      // The format of newWebhookSecret() (libs/sdk/src/webhooks.ts): whsec_ + 32 random bytes.
      await queryRunner.query('INSERT INTO webhook_secrets (account_id, secret, created_at) VALUES ($1, $2, now())', [
        id,
        `whsec_${randomBytes(32).toString('base64')}`,
      ]);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    // The secrets made here stay: the broker before this migration signs with them as its first ones.
    await queryRunner.query('ALTER TABLE "webhook_secrets" DROP COLUMN "revealed_at"');
  }
}
