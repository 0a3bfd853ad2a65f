import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { BreakerSnapshot } from '@app/circuit-breaker';

/**
 * The delivery state of one URL, shared by the replicas. One replica at a time owns an endpoint (`owner`
 * until `lease_until`) and sends its deliveries, which is what makes the in-flight cap and the single
 * trial of a down endpoint hold across replicas. `blocked_until` is set while the endpoint is down or
 * its breaker is open: nothing is sent to it before then.
 */
@Entity('webhook_endpoints')
@Index('idx_webhook_endpoints_owner', ['owner'], { where: `"owner" IS NOT NULL` })
@Index('idx_webhook_endpoints_blocked', ['blockedUntil'], { where: `"blocked_until" IS NOT NULL` })
export class WebhookEndpoint {
  @PrimaryColumn({ type: 'text' })
  url: string;

  @Column({ type: 'text', nullable: true })
  owner: string | null;

  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  @Column({ name: 'blocked_until', type: 'timestamptz', nullable: true })
  blockedUntil: Date | null;

  /** The "endpoint down" rule (3 failures in a row → one attempt every 5 minutes), as a breaker snapshot. */
  @Column({ name: 'down_breaker', type: 'jsonb', nullable: true })
  downBreaker: BreakerSnapshot | null;

  /** The per-callback-URL breaker (docs/design.md#other-breakers-in-the-library), as a snapshot. */
  @Column({ name: 'url_breaker', type: 'jsonb', nullable: true })
  urlBreaker: BreakerSnapshot | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'last_success_at', type: 'timestamptz', nullable: true })
  lastSuccessAt: Date | null;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
