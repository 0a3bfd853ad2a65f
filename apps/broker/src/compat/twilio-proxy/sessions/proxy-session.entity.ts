import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { ProxyService } from '../services/proxy-service.entity';

/** Twilio Proxy's `mode`: the channels of the session. */
export type ProxySessionMode = 'voice-and-message' | 'message-only' | 'voice-only';

/**
 * A Twilio Proxy Session (sid `KC` + its id). Its id is the id of the broker session that carries it: that
 * session is reserved with the first participant (held pending, so the pool rule keeps the participant's
 * proxy number) and made active with the second (compat/twilio-proxy/sessions/proxy-sessions.service.ts).
 * What happens to it afterwards (relays, expiry, the close) is the broker session's; this row keeps what
 * Twilio's API says that the broker's does not.
 */
@Entity('twilio_proxy_sessions')
@Index('idx_twilio_proxy_sessions_service', ['serviceId', 'createdAt', 'id'])
// Twilio Proxy: a Session's UniqueName is unique among the Service's sessions (80603); a deleted one frees it.
@Index('uq_twilio_proxy_sessions_name', ['serviceId', 'uniqueName'], {
  unique: true,
  where: '"unique_name" IS NOT NULL AND "deleted_at" IS NULL',
})
@Check('chk_twilio_proxy_sessions_mode', `"mode" IN ('voice-and-message', 'message-only', 'voice-only')`)
@Check('chk_twilio_proxy_sessions_ttl', `"ttl" >= 0`)
export class ProxySession {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'service_id', type: 'uuid' })
  serviceId: string;

  @ManyToOne(() => ProxyService, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'service_id' })
  service?: Relation<ProxyService>;

  /** The Service's account, copied: every read is scoped by it. */
  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @Column({ name: 'unique_name', type: 'text', nullable: true })
  uniqueName: string | null;

  @Column({ type: 'text' })
  mode: ProxySessionMode;

  /** Seconds after its creation or last interaction that it ends; 0: no idle expiry. */
  @Column({ type: 'integer', default: 0 })
  ttl: number;

  /** The `DateExpiry` the client gave; null: none. */
  @Column({ name: 'date_expiry', type: 'timestamptz', nullable: true })
  dateExpiry: Date | null;

  /** The hard limit the broker session gets: `date_expiry`, else its creation plus the broker's longest (7 days). */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  /** Closed through this API before a broker session carried it (no participants yet, or one). */
  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true })
  closedAt: Date | null;

  @Column({ name: 'closed_reason', type: 'text', nullable: true })
  closedReason: string | null;

  /** `DELETE`: gone from this API (its broker session, closed, stays in the broker's). */
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
