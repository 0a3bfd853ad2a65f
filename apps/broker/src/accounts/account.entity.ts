import { Check, Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A customer of the broker. Sessions, keys and callback settings belong to one account. */
@Entity('accounts')
@Check('chk_accounts_default_country', `"default_country" ~ '^[A-Z]{2}$'`)
@Check('chk_accounts_rescue', `"rescue_after_seconds" >= 0 AND ("rescue_notice" IS NULL OR "rescue_after_seconds" IS NOT NULL)`)
export class Account {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  name: string;

  /** Where session events go when a session has no callbackUrl of its own. */
  @Column({ name: 'default_callback_url', type: 'text', nullable: true })
  defaultCallbackUrl: string | null;

  /** Asked before every relay and bridge of a session that names no interceptUrl of its own (`PUT /v1/account/intercept-url`). */
  @Column({ name: 'intercept_url', type: 'text', nullable: true })
  interceptUrl: string | null;

  /**
   * ISO 3166 countries this account may connect participants in; null: the countries of the
   * pool's numbers (docs/security.md). Widened by the admin API and `broker accounts destinations`.
   */
  @Column({ name: 'allowed_countries', type: 'text', array: true, nullable: true })
  allowedCountries: string[] | null;

  /** Premium-rate and other special-rate numbers are refused unless an operator allows them here. */
  @Column({ name: 'allow_special_rate', type: 'boolean', default: false })
  allowSpecialRate: boolean;

  /** ISO 3166 country whose national numbers participants may be written in (`PUT /v1/account/default-country`); null: E.164 only. */
  @Column({ name: 'default_country', type: 'text', nullable: true })
  defaultCountry: string | null;

  /**
   * Session rescue (`PUT /v1/account/rescue`, docs/design.md#session-rescue): once a provider has been OPEN this
   * long, the account's active sessions on it move to a provider that admits them; null: they stay (the default).
   */
  @Column({ name: 'rescue_after_seconds', type: 'integer', nullable: true })
  rescueAfterSeconds: number | null;

  /** Texted to each participant from the new number after a rescue, where the session has the sms channel; null: nothing. */
  @Column({ name: 'rescue_notice', type: 'text', nullable: true })
  rescueNotice: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
