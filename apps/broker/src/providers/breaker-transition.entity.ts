import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One change of a provider breaker's state, as ops read it in the history. */
@Entity('breaker_transitions')
@Index('idx_breaker_transitions_provider_at', ['provider', 'at'])
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
}
