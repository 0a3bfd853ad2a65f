import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Account } from '../../accounts/account.entity';

export const SESSION_EVENT_TYPES = [
  'session.created',
  'session.closed',
  'session.expired',
  'message.relayed',
  'message.failed',
  'call.completed',
  'interaction.blocked',
  'interaction.out_of_session',
  'session.rebound',
  'session.rescue_failed',
] as const;
export type SessionEventType = (typeof SESSION_EVENT_TYPES)[number];
export type OpsEventType = 'provider.state_changed';
export type WebhookEventType = SessionEventType | OpsEventType;

/**
 * Something that happened, recorded in the same transaction as the change that caused it (the outbox).
 * Session events belong to an account; ops events (`provider.state_changed`) to none.
 */
@Entity('webhook_events')
@Index('idx_webhook_events_account_created', ['accountId', 'createdAt', 'id'])
@Index('idx_webhook_events_session_created', ['sessionId', 'createdAt', 'id'])
export class WebhookEvent {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'account_id', type: 'uuid', nullable: true })
  accountId: string | null;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Relation<Account>;

  /** Not a foreign key: an event outlives nothing, but it must never block the session change that records it. */
  @Column({ name: 'session_id', type: 'uuid', nullable: true })
  sessionId: string | null;

  @Column({ type: 'text' })
  type: WebhookEventType;

  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
