import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

type OverrideStatus = 'pending' | 'applied' | 'withdrawn';

/**
 * An operator's request to force a provider's breaker OPEN or CLOSED (`POST /v1/admin/providers/:name/breaker`),
 * made on any replica and applied by the breaker leader. `pending` until the leader takes it (`applied`, then
 * the transition it made names it) or the replica that asked gives up waiting (`withdrawn`): never both.
 */
@Entity('breaker_overrides')
@Check('chk_breaker_overrides_state', `"state" IN ('OPEN', 'CLOSED')`)
@Check('chk_breaker_overrides_status', `"status" IN ('pending', 'applied', 'withdrawn')`)
@Index('idx_breaker_overrides_pending', ['requestedAt'], { where: `"status" = 'pending'` })
export class BreakerOverrideRecord {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  provider: string;

  @Column({ type: 'text' })
  state: 'OPEN' | 'CLOSED';

  @Column({ type: 'text' })
  reason: string;

  /** Who asked: the admin token's identity (`admin`). */
  @Column({ name: 'requested_by', type: 'text' })
  requestedBy: string;

  /** By the database's clock: the leader takes only recent requests. */
  @CreateDateColumn({ name: 'requested_at', type: 'timestamptz' })
  requestedAt: Date;

  @Column({ type: 'text', default: 'pending' })
  status: OverrideStatus;

  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true })
  decidedAt: Date | null;

  /** The leader replica that applied it. */
  @Column({ name: 'applied_by', type: 'text', nullable: true })
  appliedBy: string | null;
}
