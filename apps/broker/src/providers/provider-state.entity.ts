import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A provider's latest breaker snapshot (restored at start, shared between replicas), whether an
 * operator disabled it by hand, which is separate from the breaker, and when the cluster last
 * health-checked it (the leader's cadence, by the database's clock).
 */
@Entity('provider_states')
export class ProviderStateRecord {
  @PrimaryColumn({ type: 'text' })
  provider: string;

  @Column({ type: 'jsonb', nullable: true })
  snapshot: unknown;

  @Column({ type: 'boolean', default: false })
  disabled: boolean;

  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason: string | null;

  @Column({ name: 'last_check_at', type: 'timestamptz', nullable: true })
  lastCheckAt: Date | null;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
