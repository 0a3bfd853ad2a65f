import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A lease one replica at a time holds (docs/operations.md): the breaker leader. `epoch` grows by one each time
 * another replica takes the lease over, and every write the leader makes checks it (fencing).
 */
@Entity('cluster_leases')
export class ClusterLeaseRecord {
  @PrimaryColumn({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  holder: string;

  @Column({ type: 'bigint' })
  epoch: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
