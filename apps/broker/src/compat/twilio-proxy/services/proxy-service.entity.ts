import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique, type Relation } from 'typeorm';
import { Account } from '../../../accounts/account.entity';

/** Twilio Proxy's `number_selection_behavior`. */
export type NumberSelectionBehavior = 'prefer-sticky' | 'avoid-sticky';

/**
 * A Twilio Proxy Service: a namespace of one account, with the defaults of its sessions and the URLs its
 * callbacks go to (compat/twilio-proxy; docs/twilio-proxy-migration.md). Its sid is `KS` + its id.
 */
@Entity('twilio_proxy_services')
@Unique('uq_twilio_proxy_services_name', ['accountId', 'uniqueName'])
@Index('idx_twilio_proxy_services_account', ['accountId', 'createdAt', 'id'])
@Check('chk_twilio_proxy_services_ttl', `"default_ttl" >= 0`)
@Check('chk_twilio_proxy_services_selection', `"number_selection_behavior" IN ('prefer-sticky', 'avoid-sticky')`)
@Check('chk_twilio_proxy_services_geo', `"geo_match_level" = 'country'`)
export class ProxyService {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Relation<Account>;

  @Column({ name: 'unique_name', type: 'text' })
  uniqueName: string;

  /** Seconds a session lives after its last interaction (its `ttl` when it names none); 0: no idle expiry. */
  @Column({ name: 'default_ttl', type: 'integer', default: 0 })
  defaultTtl: number;

  /** Told of each interaction, in Twilio's format. */
  @Column({ name: 'callback_url', type: 'text', nullable: true })
  callbackUrl: string | null;

  /** Asked before each relay and bridge of its sessions, in Twilio's format: 403 blocks. */
  @Column({ name: 'intercept_callback_url', type: 'text', nullable: true })
  interceptCallbackUrl: string | null;

  /** Told of a text or call to one of its numbers from someone with no live session there. */
  @Column({ name: 'out_of_session_callback_url', type: 'text', nullable: true })
  outOfSessionCallbackUrl: string | null;

  @Column({ name: 'number_selection_behavior', type: 'text', default: 'prefer-sticky' })
  numberSelectionBehavior: NumberSelectionBehavior;

  /** Only `country`: the pool's numbers serve the countries the account may reach (docs/security.md). */
  @Column({ name: 'geo_match_level', type: 'text', default: 'country' })
  geoMatchLevel: 'country';

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
