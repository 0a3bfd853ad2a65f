import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import type { Channel } from '../numbers/proxy-number.entity';
import { Session } from '../sessions/session.entity';

/**
 * A call or message relayed through a session, or a message the app sent into it (`from` is then the
 * proxy number). For SMS it is also the durable outbox row of the relay: `pending` until the provider
 * accepted it, retried from `nextAttemptAt` until then or until the session ends. `blocked`: the
 * intercept refused it (nothing was relayed or bridged); `out-of-session`: it came on a channel the
 * session does not have, and got the out-of-session answer.
 */
export type InteractionStatus =
  | 'pending'
  | 'relayed'
  | 'delivered'
  | 'undelivered'
  | 'failed'
  | 'bridged'
  | 'completed'
  | 'busy'
  | 'no-answer'
  | 'declined'
  | 'canceled'
  | 'blocked'
  | 'out-of-session';

@Entity('interactions')
@Check('chk_interactions_channel', `"channel" IN ('voice', 'sms')`)
@Index('idx_interactions_session', ['sessionId', 'createdAt'])
@Index('idx_interactions_due', ['nextAttemptAt'], { where: `"status" = 'pending'` })
// A provider that delivers the same webhook twice gets one relay.
@Index('uq_interactions_provider_event', ['sessionId', 'providerEventId'], { unique: true, where: '"provider_event_id" IS NOT NULL' })
@Index('idx_interactions_provider_ref', ['providerRef'], { where: '"provider_ref" IS NOT NULL' })
// A message from the app sent twice with one Idempotency-Key is one message, even after a takeover.
@Index('uq_interactions_idempotency_key', ['sessionId', 'idempotencyKey'], { unique: true, where: '"idempotency_key" IS NOT NULL' })
// The texts INTERACTION_TEXT_RETENTION_DAYS will erase, oldest first (apps/broker/src/retention).
@Index('idx_interactions_text_kept', ['createdAt'], { where: '"text" IS NOT NULL' })
export class Interaction {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @ManyToOne(() => Session, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: Relation<Session>;

  @Column({ type: 'text' })
  channel: Channel;

  /** The participant who sent or called. */
  @Column({ name: 'from_number', type: 'text' })
  from: string;

  /** The participant it was relayed to. */
  @Column({ name: 'to_number', type: 'text' })
  to: string;

  @Column({ type: 'text', nullable: true })
  text: string | null;

  @Column({ type: 'text' })
  status: InteractionStatus;

  /** The provider's id of the inbound webhook event that caused this interaction. */
  @Column({ name: 'provider_event_id', type: 'text', nullable: true })
  providerEventId: string | null;

  /** The provider's id for the relayed message or call. */
  @Column({ name: 'provider_ref', type: 'text', nullable: true })
  providerRef: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'duration_sec', type: 'integer', nullable: true })
  durationSec: number | null;

  /** The `Idempotency-Key` of the `POST /v1/sessions/:id/messages` that made it. */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
