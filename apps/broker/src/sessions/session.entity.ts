import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Account } from '../accounts/account.entity';
import { ProxyNumber, type Channel } from '../numbers/proxy-number.entity';

/**
 * `pending` is internal: the proxy number is reserved and the provider is being asked to bind it.
 * Clients only ever see `active`, `closed` and `expired`.
 */
export type SessionStatus = 'pending' | 'active' | 'closed' | 'expired';

/** Why a session expired: its hard limit (`expiresAt`, from ttlSeconds) or `idleTtlSeconds` without an interaction. */
export type ExpiredReason = 'ttl' | 'idle';

/** A proxy number a session had before a rescue moved it (docs/design.md#session-rescue); ISO times. */
export interface PastNumber {
  provider: string;
  proxyNumber: string;
  /** When the session got it: its creation, or the move that brought it there. */
  since: string;
  /** When a rescue moved the session off it. */
  until: string;
}

/**
 * A conversation between two participants through one proxy number, on one or both channels. The proxy
 * number and the provider are columns of their own (a rescue may move a session to another number on
 * another provider, keeping its id); the participants are rows too (session_participants), which hold
 * the pool rule.
 */
@Entity('sessions')
// Every non-empty subset of the channels, in one spelling each (voice before sms).
@Check('chk_sessions_channels', `"channels" IN ('{voice}', '{sms}', '{voice,sms}')`)
@Check('chk_sessions_status', `"status" IN ('pending', 'active', 'closed', 'expired')`)
@Check('chk_sessions_expired_reason', `"expired_reason" IS NULL OR "expired_reason" IN ('ttl', 'idle')`)
@Check('chk_sessions_idle_ttl', `"idle_ttl_seconds" IS NULL OR "idle_ttl_seconds" > 0`)
@Index('idx_sessions_account_created', ['accountId', 'createdAt', 'id'])
@Index('idx_sessions_status_inactive', ['status', 'inactiveAt'])
@Index('idx_sessions_idempotency_key', ['accountId', 'idempotencyKey'], { where: '"idempotency_key" IS NOT NULL' })
// uniqueName: one live session per name and account; a name past its session's end is freed by whoever needs it next.
@Index('uq_sessions_live_unique_name', ['accountId', 'uniqueName'], {
  unique: true,
  where: `"unique_name" IS NOT NULL AND "status" IN ('pending', 'active')`,
})
@Index('idx_sessions_unique_name', ['accountId', 'uniqueName', 'createdAt'], { where: '"unique_name" IS NOT NULL' })
export class Session {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Relation<Account>;

  /** `voice`, `sms` or both, voice first: the proxy number carries every one of them. */
  @Column({ type: 'text', array: true })
  channels: Channel[];

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

  /** The hard limit (from ttlSeconds): the session ends then whatever happens in it. */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /** Expires this long after its last interaction (or its creation); null: only expiresAt ends it. */
  @Column({ name: 'idle_ttl_seconds', type: 'integer', nullable: true })
  idleTtlSeconds: number | null;

  /** The last interaction recorded on it (relayed, bridged, sent from the app, or blocked); null: none yet. */
  @Column({ name: 'last_interaction_at', type: 'timestamptz', nullable: true })
  lastInteractionAt: Date | null;

  /**
   * The session is inactive from here on, swept or not: expiresAt, or sooner its idle deadline. Moved
   * by each interaction while the session is live, never past expiresAt; its participant rows carry a copy.
   */
  @Column({ name: 'inactive_at', type: 'timestamptz' })
  inactiveAt: Date;

  /** Set when it ended as `expired`. */
  @Column({ name: 'expired_reason', type: 'text', nullable: true })
  expiredReason: ExpiredReason | null;

  /** The client's own name for it: unique per account among live sessions (`GET /v1/sessions?uniqueName=`). */
  @Column({ name: 'unique_name', type: 'text', nullable: true })
  uniqueName: string | null;

  /** Asked before every relay and bridge; null: the account's intercept URL, if any. */
  @Column({ name: 'intercept_url', type: 'text', nullable: true })
  interceptUrl: string | null;

  /** When it was closed or marked expired. */
  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  /** The `Idempotency-Key` of the create that made it: a retry after a crash finds it by this. */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  /** The numbers it had before its current one, oldest first; empty for a session no rescue moved. */
  @Column({ name: 'number_history', type: 'jsonb', default: () => "'[]'" })
  numberHistory: PastNumber[];

  /** When the provider binding was released (unbind done, or nothing to unbind). */
  @Column({ name: 'released_at', type: 'timestamptz', nullable: true })
  releasedAt: Date | null;
}
