import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Session } from '../sessions/session.entity';

/**
 * `pending`: due, not done yet (retried while the outage lasts); `moved`: the session is on its new number;
 * `failed`: no provider that admitted it had a number free for it (`session.rescue_failed`); `cancelled`: not
 * needed any more (the outage ended, the session ended, the account turned rescue off).
 */
type SessionMoveStatus = 'pending' | 'moved' | 'failed' | 'cancelled';

/**
 * One session's rescue from one outage (docs/design.md#session-rescue): the durable work row the breaker leader
 * writes when the session becomes due and settles in the same transaction as the move itself, so a rescue in
 * flight survives a crash of any replica and the next leader carries on from here. The unique index is "at most
 * once per outage" (a cancelled row does not count: the rescue may be planned again). Moved rows are also the
 * history an inbound on an old number is recognised by.
 */
@Entity('session_moves')
@Check('chk_session_moves_status', `"status" IN ('pending', 'moved', 'failed', 'cancelled')`)
@Index('uq_session_moves_once_per_outage', ['sessionId', 'fromProvider', 'outageStartedAt'], {
  unique: true,
  where: `"status" <> 'cancelled'`,
})
@Index('idx_session_moves_due', ['nextAttemptAt'], { where: `"status" = 'pending'` })
// An inbound on a number a session was moved off (the provider came back): out of session, never relayed.
@Index('idx_session_moves_from_number', ['fromProvider', 'fromProxyNumber'], { where: `"status" = 'moved'` })
// Old bindings still to release on their provider once it is back.
@Index('idx_session_moves_unreleased', ['fromProvider'], {
  where: `"status" = 'moved' AND "from_binding_id" IS NOT NULL AND "from_released_at" IS NULL`,
})
export class SessionMove {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @ManyToOne(() => Session, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: Relation<Session>;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @Column({ name: 'from_provider', type: 'text' })
  fromProvider: string;

  @Column({ name: 'from_proxy_number_id', type: 'uuid' })
  fromProxyNumberId: string;

  @Column({ name: 'from_proxy_number', type: 'text' })
  fromProxyNumber: string;

  /** The binding on the old provider, released once that provider is back (null: nothing to release). */
  @Column({ name: 'from_binding_id', type: 'text', nullable: true })
  fromBindingId: string | null;

  /** When the old provider's breaker opened (the breakers' clock): names the outage. */
  @Column({ name: 'outage_started_at', type: 'timestamptz' })
  outageStartedAt: Date;

  @Column({ type: 'text' })
  status: SessionMoveStatus;

  @Column({ name: 'to_provider', type: 'text', nullable: true })
  toProvider: string | null;

  @Column({ name: 'to_proxy_number_id', type: 'uuid', nullable: true })
  toProxyNumberId: string | null;

  @Column({ name: 'to_proxy_number', type: 'text', nullable: true })
  toProxyNumber: string | null;

  /** Why it was moved, failed or cancelled; while pending, what the last attempt met. */
  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /** While pending: not tried before then (the broker's clock). */
  @Column({ name: 'next_attempt_at', type: 'timestamptz' })
  nextAttemptAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** When it was moved, failed or cancelled. */
  @Column({ name: 'settled_at', type: 'timestamptz', nullable: true })
  settledAt: Date | null;

  /** The replica (breaker leader) that moved it. */
  @Column({ name: 'moved_by', type: 'text', nullable: true })
  movedBy: string | null;

  /** When the old binding was released (unbound, or refused as already gone). */
  @Column({ name: 'from_released_at', type: 'timestamptz', nullable: true })
  fromReleasedAt: Date | null;
}
