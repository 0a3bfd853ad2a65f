import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Session } from './session.entity';

/**
 * One participant of one session on its proxy number. The partial unique index is the pool rule:
 * a participant number is in at most one active session per proxy number, which is what lets an
 * inbound call or SMS to a proxy number resolve to exactly one session. The database enforces it
 * for every replica at once.
 */
@Entity('session_participants')
@Index('uq_active_participant_per_proxy', ['proxyNumberId', 'number'], { unique: true, where: '"active"' })
// SESSION_NUMBER_QUARANTINE_SECONDS: a participant's rows live now or ended within the quarantine, whatever the table holds.
@Index('idx_participant_quarantine', ['number', 'expiresAt'])
// SESSION_PARTICIPANT_LIMIT holds exactly under concurrent creates: each shared-pool session takes one of the limit's slots.
@Index('uq_participant_limit_slot', ['accountId', 'number', 'sharedSlot'], {
  unique: true,
  where: '"active" AND "shared_slot" IS NOT NULL',
})
// numberSelection "prefer-sticky": the proxy number of a participant's most recent session with the account.
@Index('idx_participant_history', ['accountId', 'number', 'createdAt'])
export class SessionParticipant {
  @PrimaryColumn({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @ManyToOne(() => Session, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: Relation<Session>;

  @PrimaryColumn({ type: 'text' })
  number: string;

  @Column({ name: 'proxy_number_id', type: 'uuid' })
  proxyNumberId: string;

  @Column({ type: 'boolean' })
  active: boolean;

  /** Copied from the session (null in rows made before the participant limit). */
  @Column({ name: 'account_id', type: 'uuid', nullable: true })
  accountId: string | null;

  /** 1..SESSION_PARTICIPANT_LIMIT on a shared proxy number; null on a number dedicated to the account. */
  @Column({ name: 'shared_slot', type: 'smallint', nullable: true })
  sharedSlot: number | null;

  /**
   * The session's inactiveAt, kept in step with it: a row is treated as inactive from here on, swept or not. A close
   * sooner sets it to the close: the participant's quarantine on this number runs from here.
   */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /** The session's other participant: the one person this one may share the number with again during its quarantine. */
  @Column({ type: 'text' })
  partner: string;

  /** When the participant joined the session (its creation). */
  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
