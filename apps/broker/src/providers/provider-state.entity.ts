import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A provider's latest breaker snapshot (restored at start, shared between replicas) and whether an
 * operator disabled it by hand, which is separate from the breaker.
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

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
