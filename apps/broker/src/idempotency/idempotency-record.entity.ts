import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One `Idempotency-Key` of one account: the request it came with (as a hash) and, once done, the
 * response to replay. Kept 24 h.
 */
@Entity('idempotency_records')
@Index('idx_idempotency_expires', ['expiresAt'])
export class IdempotencyRecord {
  @PrimaryColumn({ name: 'account_id', type: 'uuid' })
  accountId: string;

  @PrimaryColumn({ type: 'text' })
  key: string;

  @Column({ name: 'request_hash', type: 'char', length: 64 })
  requestHash: string;

  /** Null while the first request is still being handled. */
  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  /** The JSON text sent the first time, kept as text so a replay is the same bytes. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
