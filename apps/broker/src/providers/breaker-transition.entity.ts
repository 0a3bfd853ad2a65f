import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { BreakerOverrideRecord } from './breaker-override.entity';

/** One change of a provider breaker's state, as ops read it in the history. */
@Entity('breaker_transitions')
@Index('idx_breaker_transitions_provider_at', ['provider', 'at'])
@Index('idx_breaker_transitions_override', ['overrideId'], { where: '"override_id" IS NOT NULL' })
export class BreakerTransitionRecord {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  provider: string;

  @Column({ name: 'from_state', type: 'text' })
  from: string;

  @Column({ name: 'to_state', type: 'text' })
  to: string;

  @Column({ type: 'text' })
  reason: string;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ type: 'timestamptz' })
  at: Date;

  /** Who forced this transition (`admin`), `reason` being theirs; null when the breaker's own rules made it. */
  @Column({ name: 'forced_by', type: 'text', nullable: true })
  forcedBy: string | null;

  /** The operator's request it applied (a forced transition); null otherwise. */
  @Column({ name: 'override_id', type: 'bigint', nullable: true })
  overrideId: string | null;

  @ManyToOne(() => BreakerOverrideRecord, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'override_id' })
  override?: Relation<BreakerOverrideRecord>;
}
