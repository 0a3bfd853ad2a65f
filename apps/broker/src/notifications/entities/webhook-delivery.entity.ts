import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { WebhookEvent } from './webhook-event.entity';

/** `given_up`: not delivered within the lifetime (72 h); never sent again. */
export type DeliveryStatus = 'pending' | 'delivered' | 'given_up';

/**
 * One event on its way to one URL. Its id is the `webhook-id` header: the same on every retry. Due when
 * `pending` and `next_attempt_at` has passed; sent by the replica that owns its endpoint.
 */
@Entity('webhook_deliveries')
@Check('chk_webhook_deliveries_status', `"status" IN ('pending', 'delivered', 'given_up')`)
@Check('chk_webhook_deliveries_kind', `"kind" IN ('account', 'ops')`)
// An endpoint is (account, URL): its due deliveries are one range of this index, and the due scan walks its pairs.
@Index('idx_webhook_deliveries_endpoint_due', ['url', 'accountId', 'nextAttemptAt'], { where: `"status" = 'pending'` })
@Index('idx_webhook_deliveries_expiring', ['expiresAt'], { where: `"status" = 'pending'` })
@Index('idx_webhook_deliveries_event', ['eventId'])
// The given-up count of /metrics, by kind and last answer, read from the index alone.
@Index('idx_webhook_deliveries_given_up', ['kind', 'lastStatusCode', 'attempts'], { where: `"status" = 'given_up'` })
export class WebhookDelivery {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @ManyToOne(() => WebhookEvent, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id' })
  event?: Relation<WebhookEvent>;

  /** Copied from the event, so an account reads its deliveries without a join. Null for ops deliveries. */
  @Column({ name: 'account_id', type: 'uuid', nullable: true })
  accountId: string | null;

  /** `account`: signed with the account's secrets, public addresses only; `ops`: the operator's OPS_WEBHOOK_URL. */
  @Column({ type: 'text' })
  kind: 'account' | 'ops';

  /** With `account_id`, the endpoint: each (account, URL) has its own in-flight cap, down state and breaker. */
  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text' })
  status: DeliveryStatus;

  /** Attempts made (an attempt skipped by an open breaker or a down endpoint is not one). */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  /** Created + WEBHOOK_GIVE_UP_AFTER_MS: not delivered by then, it is given up. */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'last_status_code', type: 'integer', nullable: true })
  lastStatusCode: number | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;

  @Column({ name: 'given_up_at', type: 'timestamptz', nullable: true })
  givenUpAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
