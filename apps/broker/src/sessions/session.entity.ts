import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Account } from '../accounts/account.entity';
import { ProxyNumber, type Channel } from '../numbers/proxy-number.entity';

/**
 * `pending` is internal: the proxy number is reserved and the provider is being asked to bind it.
 * Clients only ever see `active`, `closed` and `expired`.
 */
export type SessionStatus = 'pending' | 'active' | 'closed' | 'expired';

@Entity('sessions')
@Check('chk_sessions_channel', `"channel" IN ('voice', 'sms')`)
@Check('chk_sessions_status', `"status" IN ('pending', 'active', 'closed', 'expired')`)
@Index('idx_sessions_account_created', ['accountId', 'createdAt', 'id'])
@Index('idx_sessions_status_expires', ['status', 'expiresAt'])
@Index('idx_sessions_idempotency_key', ['accountId', 'idempotencyKey'], { where: '"idempotency_key" IS NOT NULL' })
export class Session {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Relation<Account>;

  @Column({ type: 'text' })
  channel: Channel;

  @Column({ type: 'text' })
  status: SessionStatus;

  @Column({ type: 'text' })
  provider: string;

  @Column({ name: 'proxy_number_id', type: 'uuid' })
  proxyNumberId: string;

  @ManyToOne(() => ProxyNumber, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'proxy_number_id' })
  proxyNumberRef?: Relation<ProxyNumber>;

  @Column({ name: 'proxy_number', type: 'text' })
  proxyNumber: string;

  /** The two participants' E.164 numbers, in the order the client gave them. */
  @Column({ type: 'text', array: true })
  participants: string[];

  /** The provider's id for the binding, once bound. */
  @Column({ name: 'binding_id', type: 'text', nullable: true })
  bindingId: string | null;

  @Column({ name: 'callback_url', type: 'text', nullable: true })
  callbackUrl: string | null;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  metadata: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /** When it was closed or marked expired. */
  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  /** The `Idempotency-Key` of the create that made it: a retry after a crash finds it by this. */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  /** When the provider binding was released (unbind done, or nothing to unbind). */
  @Column({ name: 'released_at', type: 'timestamptz', nullable: true })
  releasedAt: Date | null;
}
