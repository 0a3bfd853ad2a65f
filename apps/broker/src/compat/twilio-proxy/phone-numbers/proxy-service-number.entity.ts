import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { ProxyNumber } from '../../../numbers/proxy-number.entity';
import { ProxyService } from '../services/proxy-service.entity';

/**
 * A proxy number in a Service's pool (Twilio Proxy's PhoneNumber, sid `PN` + the number's id): a pool number
 * dedicated to the Service's account, in at most one Service. `is_reserved`: only a participant who asks for
 * it by its number or sid gets it, never the pool's own choice.
 */
@Entity('twilio_proxy_phone_numbers')
@Index('idx_twilio_proxy_phone_numbers_service', ['serviceId', 'createdAt', 'proxyNumberId'])
export class ProxyServiceNumber {
  @PrimaryColumn({ name: 'proxy_number_id', type: 'uuid' })
  proxyNumberId: string;

  @ManyToOne(() => ProxyNumber, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'proxy_number_id' })
  proxyNumber?: Relation<ProxyNumber>;

  @Column({ name: 'service_id', type: 'uuid' })
  serviceId: string;

  @ManyToOne(() => ProxyService, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'service_id' })
  service?: Relation<ProxyService>;

  @Column({ name: 'is_reserved', type: 'boolean', default: false })
  isReserved: boolean;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
