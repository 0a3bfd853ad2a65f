import { Check, Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';

export type Channel = 'voice' | 'sms';

/** A number the broker holds on one provider and lends to sessions as their proxy number. */
@Entity('proxy_numbers')
@Unique('uq_proxy_numbers_provider_number', ['provider', 'number'])
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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
