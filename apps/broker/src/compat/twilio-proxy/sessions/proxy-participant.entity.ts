import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { ProxySession } from './proxy-session.entity';

/**
 * A Twilio Proxy Participant (sid `KP` + its id): one of the (at most two) people of a Session, in the order
 * they were added (`slot`). Its proxy identifier is not kept here: it is the number of the broker session
 * that carries the Session, read live (a failover before the second participant, or a rescue, moves it).
 * Two partial unique indexes settle races in the database: two adds of a second participant, and the same
 * person added twice (docs/twilio-proxy-migration.md#participant-races).
 */
@Entity('twilio_proxy_participants')
@Index('uq_twilio_proxy_participants_slot', ['sessionId', 'slot'], { unique: true, where: '"deleted_at" IS NULL' })
@Index('uq_twilio_proxy_participants_identifier', ['sessionId', 'identifier'], { unique: true, where: '"deleted_at" IS NULL' })
@Check('chk_twilio_proxy_participants_slot', `"slot" IN (1, 2)`)
export class ProxyParticipant {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @ManyToOne(() => ProxySession, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: Relation<ProxySession>;

  /** E.164. */
  @Column({ type: 'text' })
  identifier: string;

  @Column({ name: 'friendly_name', type: 'text', nullable: true })
  friendlyName: string | null;

  /** The proxy number the participant asked for (ProxyIdentifier or its sid): the session keeps it; null: the pool's choice. */
  @Column({ name: 'requested_proxy_number_id', type: 'uuid', nullable: true })
  requestedProxyNumberId: string | null;

  /** 1 or 2: the first or the second participant. */
  @Column({ type: 'smallint' })
  slot: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}
