import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import type { BreakerSnapshot } from '@app/circuit-breaker';
import { Account } from '../../accounts/account.entity';

/**
 * The delivery state of one URL for one account (or, with no account, for the operator's OPS_WEBHOOK_URL),
 * shared by the replicas. Per (account, URL), not per URL: two tenants naming the same URL never share a
 * down state, a breaker, a lease or a history, so one cannot take the other's endpoint down (docs/security.md).
 * One replica at a time owns an endpoint (`owner` until `lease_until`) and sends its deliveries, which is
 * what makes the in-flight cap and the single trial of a down endpoint hold across replicas.
 * `blocked_until` is set while the endpoint is down or its breaker is open: nothing is sent to it before then.
 */
@Entity('webhook_endpoints')
// Every lookup starts from the URL (non-partial, so it serves the operator's rows too); an account has one row per URL.
@Index('uq_webhook_endpoints_url_account', ['url', 'accountId'], { unique: true })
// NULLs are distinct in the index above: the operator's endpoints are unique by URL here.
@Index('uq_webhook_endpoints_ops_url', ['url'], { unique: true, where: `"account_id" IS NULL` })
@Index('idx_webhook_endpoints_owner', ['owner'], { where: `"owner" IS NOT NULL` })
@Index('idx_webhook_endpoints_blocked', ['blockedUntil'], { where: `"blocked_until" IS NOT NULL` })
export class WebhookEndpoint {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The account whose deliveries these are; null for the operator's `provider.state_changed` webhooks. */
  @Column({ name: 'account_id', type: 'uuid', nullable: true })
  accountId: string | null;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Relation<Account>;

  @Column({ type: 'text' })
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
