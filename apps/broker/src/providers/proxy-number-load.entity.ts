import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Active sessions per proxy number and channels, kept with the sessions (migration PoolUsageCounts): a trigger on
 * `sessions` writes a change (+1, −1) whenever a session starts or stops being `active` or moves to another number,
 * and the pool-usage refresh folds the changes into these totals. Reading the pool's load then costs the pool's
 * size and the changes since the last fold, not the number of active sessions. A session past its inactiveAt
 * counts until the sweeper marks it expired (SESSION_SWEEP_INTERVAL_MS).
 */
@Entity('proxy_number_loads')
export class ProxyNumberLoad {
  @PrimaryColumn({ name: 'proxy_number_id', type: 'uuid' })
  proxyNumberId: string;

  /** `voice`, `sms` or `voice+sms`. */
  @PrimaryColumn({ type: 'text' })
  channels: string;

  @Column({ type: 'integer' })
  active: number;
}

/** A change of one active session on one number, not folded into ProxyNumberLoad yet. */
@Entity('proxy_number_load_changes')
export class ProxyNumberLoadChange {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'proxy_number_id', type: 'uuid' })
  proxyNumberId: string;

  @Column({ type: 'text' })
  channels: string;

  /** +1 or −1. */
  @Column({ type: 'smallint' })
  delta: number;
}
