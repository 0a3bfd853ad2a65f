import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Account } from '../account.entity';

/**
 * An account's signing secret. The current one has no `expires_at`; after a rotation the previous one
 * gets `expires_at` = rotation + 24 h and keeps signing until then. Stored as is: signing needs it. Each is
 * shown once: `revealed_at` says when.
 */
@Entity('webhook_secrets')
@Index('uq_webhook_secrets_current', ['accountId'], { unique: true, where: `"expires_at" IS NULL` })
@Index('idx_webhook_secrets_account', ['accountId', 'createdAt'])
export class WebhookSecret {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Relation<Account>;

  @Column({ type: 'text' })
  secret: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  /** When this secret was shown (by the request that made it, or the one-time reveal); null: not yet. */
  @Column({ name: 'revealed_at', type: 'timestamptz', nullable: true })
  revealedAt: Date | null;
}
