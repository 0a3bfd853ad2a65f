import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Account } from './account.entity';

/** Who revoked a key: an operator (admin API, CLI), or the start that found it gone from BROKER_API_KEY. */
type KeyRevocation = 'operator' | 'removed-from-environment';

/** An API key, stored only as its SHA-256: the key itself is shown once, when it is made. */
@Entity('api_keys')
@Check('chk_api_keys_revoked_by', `"revoked_by" IN ('operator', 'removed-from-environment')`)
export class ApiKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Index('idx_api_keys_account')
  @Column({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Relation<Account>;

  @Index('uq_api_keys_hash', { unique: true })
  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash: string;

  /** The first characters of the key, so an operator can tell keys apart. */
  @Column({ name: 'key_prefix', type: 'text' })
  keyPrefix: string;

  @Column({ type: 'text', nullable: true })
  label: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /** Null while live. */
  @Column({ name: 'revoked_by', type: 'text', nullable: true })
  revokedBy: KeyRevocation | null;

  /** Made from BROKER_API_KEY: revoked at a start whose BROKER_API_KEY no longer lists it. */
  @Column({ name: 'from_environment', type: 'boolean', default: false })
  fromEnvironment: boolean;
}
