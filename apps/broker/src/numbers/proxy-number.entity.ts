import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  type Relation,
} from 'typeorm';
import { Account } from '../accounts/account.entity';
import type { Channel } from '../common/phone-number';

export type { Channel } from '../common/phone-number';

/**
 * A number the broker holds on one provider and lends to sessions as their proxy number: to any
 * account's (the shared pool), or, when dedicated, only to its account's sessions.
 */
@Entity('proxy_numbers')
@Unique('uq_proxy_numbers_provider_number', ['provider', 'number'])
@Index('idx_proxy_numbers_account', ['accountId'], { where: '"account_id" IS NOT NULL' })
@Check('chk_proxy_numbers_e164', `"number" ~ '^\\+[1-9][0-9]{6,14}$'`)
export class ProxyNumber {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  provider: string;

  /** E.164. */
  @Column({ type: 'text' })
  number: string;

  @Column({ type: 'text', array: true, default: () => "'{sms,voice}'" })
  capabilities: Channel[];

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  /** The account this number is dedicated to; null: the shared pool. */
  @Column({ name: 'account_id', type: 'uuid', nullable: true })
  accountId: string | null;

  // A number of an account that goes returns to the shared pool.
  @ManyToOne(() => Account, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'account_id' })
  account?: Relation<Account>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
