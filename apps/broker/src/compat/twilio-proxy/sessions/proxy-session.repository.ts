/**
 * The SQL of Twilio Proxy Sessions and their Participants (compat rows), read together with the broker
 * session that carries each (same id; none before the first participant). A change is written in one
 * transaction (`transaction`): the Session row is locked first, so two participant adds to one Session run
 * one after the other, on any replica; the partial unique indexes on participants are the backstop.
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { PageCursor } from '../../../common/pagination/page-cursor';
import type { Channel } from '../../../numbers/proxy-number.entity';
import type { ExpiredReason, SessionStatus } from '../../../sessions/session.entity';
import { violatedIndex } from '../unique-violation';
import { ProxyParticipant } from './proxy-participant.entity';
import { ProxyReservationRepository, type ProxyReservation, type ProxyReservationInput } from './proxy-reservation.repository';
import { ProxySession } from './proxy-session.entity';

/** The broker session that carries a Proxy Session, as far as Twilio's answers need it. */
export interface CarryingSession {
  readonly status: SessionStatus;
  readonly provider: string;
  readonly channels: Channel[];
  readonly proxyNumberId: string;
  readonly proxyNumber: string;
  readonly participants: string[];
  readonly lastInteractionAt: Date | null;
  readonly inactiveAt: Date;
  readonly expiresAt: Date;
  readonly expiredReason: ExpiredReason | null;
  readonly endedAt: Date | null;
}

export interface ProxySessionView {
  readonly session: ProxySession;
  readonly carrier: CarryingSession | null;
}

/** What one transaction can do on a Proxy Session, its participants and its reservation. */
export interface ProxySessionTransaction {
  /** The Session (not deleted), row-locked until the transaction ends, with its carrier; null when there is none. */
  lock(accountId: string, serviceId: string, id: string): Promise<ProxySessionView | null>;
  /** Its current participants, first first. */
  participants(sessionId: string): Promise<ProxyParticipant[]>;
  addParticipant(row: Omit<ProxyParticipant, 'id' | 'session'>): Promise<ProxyParticipant>;
  removeParticipant(id: string, at: Date): Promise<void>;
  /** Closed (through this API, before or without its carrier's close) at `at`. */
  close(id: string, at: Date, reason: string | null): Promise<void>;
  /** Gone from this API at `at`. */
  delete(id: string, at: Date): Promise<void>;
  reserve(input: ProxyReservationInput): Promise<ProxyReservation | null>;
  release(sessionId: string): Promise<void>;
  /** The Session's new expiry rules, and its carrier's while it is live (its deadline and its participants' copy of it). */
  reschedule(id: string, change: { ttl: number; dateExpiry: Date | null; expiresAt: Date; at: Date }): Promise<void>;
}

@Injectable()
export class ProxySessionRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly reservations: ProxyReservationRepository,
  ) {}

  transaction<T>(work: (tx: ProxySessionTransaction) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(new PostgresProxySessionTransaction(manager, this.reservations)));
  }

  /** A new Session; `name-taken` when the Service has a (not deleted) Session of that unique name. */
  async create(row: Omit<ProxySession, 'service'>): Promise<ProxySession | 'name-taken'> {
    try {
      return await this.dataSource.getRepository(ProxySession).save(row);
    } catch (error) {
      if (violatedIndex(error) === 'uq_twilio_proxy_sessions_name') return 'name-taken';
      throw error;
    }
  }

  /** The Service's Session by id or unique name (Twilio takes either in the path), with its carrier. */
  async find(accountId: string, serviceId: string, id: string | null, uniqueName: string | null): Promise<ProxySessionView | null> {
    const [row] = await this.dataSource.query<ViewRow[]>(
      `${VIEW} WHERE ts.account_id = $1 AND ts.service_id = $2 AND ts.deleted_at IS NULL
          AND (ts.id = $3 OR ($3 IS NULL AND ts.unique_name = $4))`,
      [accountId, serviceId, id, uniqueName],
    );
    return row ? view(row) : null;
  }

  /** A page of the Service's Sessions, newest first, after `after`. */
  async page(accountId: string, serviceId: string, limit: number, after?: PageCursor): Promise<ProxySessionView[]> {
    const rows = await this.dataSource.query<ViewRow[]>(
      `${VIEW} WHERE ts.account_id = $1 AND ts.service_id = $2 AND ts.deleted_at IS NULL
          AND ($4::timestamptz IS NULL OR (ts.created_at, ts.id) < ($4, $5::uuid))
        ORDER BY ts.created_at DESC, ts.id DESC LIMIT $3`,
      [accountId, serviceId, limit, after?.at ?? null, after?.id ?? null],
    );
    return rows.map(view);
  }

  /** The Session's current participants, first first; `withRemoved`: those removed too, oldest first. */
  participants(sessionId: string, withRemoved = false): Promise<ProxyParticipant[]> {
    return participantsOf(this.dataSource.manager, sessionId, withRemoved);
  }

  /** Marks these people's participant rows that are past their deadline inactive (they stand in no one's way). */
  freeLapsed(numbers: string[], now: Date): Promise<void> {
    return this.reservations.freeLapsed(this.dataSource.manager, numbers, now);
  }

  /** The ids of the Service's Sessions that are not deleted. */
  async idsOf(serviceId: string): Promise<string[]> {
    const rows = await this.dataSource.query<Array<{ id: string }>>(
      'SELECT id FROM twilio_proxy_sessions WHERE service_id = $1 AND deleted_at IS NULL',
      [serviceId],
    );
    return rows.map((r) => r.id);
  }
}

class PostgresProxySessionTransaction implements ProxySessionTransaction {
  constructor(
    private readonly manager: EntityManager,
    private readonly reservations: ProxyReservationRepository,
  ) {}

  async lock(accountId: string, serviceId: string, id: string): Promise<ProxySessionView | null> {
    const locked = await this.manager.query<Array<{ id: string }>>(
      `SELECT id FROM twilio_proxy_sessions WHERE id = $1 AND account_id = $2 AND service_id = $3 AND deleted_at IS NULL FOR UPDATE`,
      [id, accountId, serviceId],
    );
    if (locked.length === 0) return null;
    const [row] = await this.manager.query<ViewRow[]>(`${VIEW} WHERE ts.id = $1`, [id]);
    return view(row);
  }

  participants(sessionId: string): Promise<ProxyParticipant[]> {
    return participantsOf(this.manager, sessionId);
  }

  async addParticipant(row: Omit<ProxyParticipant, 'id' | 'session'>): Promise<ProxyParticipant> {
    return this.manager.getRepository(ProxyParticipant).save(row);
  }

  async removeParticipant(id: string, at: Date): Promise<void> {
    await this.manager.update(ProxyParticipant, { id }, { deletedAt: at, updatedAt: at });
  }

  async close(id: string, at: Date, reason: string | null): Promise<void> {
    await this.manager.query(
      'UPDATE twilio_proxy_sessions SET closed_at = COALESCE(closed_at, $2), closed_reason = COALESCE(closed_reason, $3), updated_at = $2 WHERE id = $1',
      [id, at, reason],
    );
  }

  async delete(id: string, at: Date): Promise<void> {
    await this.manager.query('UPDATE twilio_proxy_sessions SET deleted_at = $2, updated_at = $2 WHERE id = $1', [id, at]);
  }

  reserve(input: ProxyReservationInput): Promise<ProxyReservation | null> {
    return this.reservations.reserve(this.manager, input);
  }

  release(sessionId: string): Promise<void> {
    return this.reservations.release(this.manager, sessionId);
  }

  async reschedule(id: string, change: { ttl: number; dateExpiry: Date | null; expiresAt: Date; at: Date }): Promise<void> {
    await this.manager.query(
      'UPDATE twilio_proxy_sessions SET ttl = $2, date_expiry = $3, expires_at = $4, updated_at = $5 WHERE id = $1',
      [id, change.ttl, change.dateExpiry, change.expiresAt, change.at],
    );
    await this.reservations.reschedule(this.manager, id, {
      idleTtlSeconds: change.ttl || null,
      expiresAt: change.expiresAt,
      now: change.at,
    });
  }
}

function participantsOf(manager: EntityManager, sessionId: string, withRemoved = false): Promise<ProxyParticipant[]> {
  const qb = manager.getRepository(ProxyParticipant).createQueryBuilder('p').where('p.sessionId = :sessionId', { sessionId });
  if (!withRemoved) return qb.andWhere('p.deletedAt IS NULL').orderBy('p.slot').getMany();
  return qb.orderBy('p.createdAt').addOrderBy('p.id').getMany();
}

const VIEW = `SELECT ts.id, ts.service_id, ts.account_id, ts.unique_name, ts.mode, ts.ttl, ts.date_expiry, ts.expires_at, ts.closed_at,
         ts.closed_reason, ts.deleted_at, ts.created_at, ts.updated_at,
         s.status AS c_status, s.provider AS c_provider, s.channels AS c_channels, s.proxy_number_id AS c_proxy_number_id,
         s.proxy_number AS c_proxy_number, s.participants AS c_participants, s.last_interaction_at AS c_last_interaction_at,
         s.inactive_at AS c_inactive_at, s.expires_at AS c_expires_at, s.expired_reason AS c_expired_reason, s.ended_at AS c_ended_at
    FROM twilio_proxy_sessions ts LEFT JOIN sessions s ON s.id = ts.id`;

interface ViewRow {
  id: string;
  service_id: string;
  account_id: string;
  unique_name: string | null;
  mode: ProxySession['mode'];
  ttl: number;
  date_expiry: Date | null;
  expires_at: Date;
  closed_at: Date | null;
  closed_reason: string | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
  c_status: SessionStatus | null;
  c_provider: string;
  c_channels: Channel[];
  c_proxy_number_id: string;
  c_proxy_number: string;
  c_participants: string[];
  c_last_interaction_at: Date | null;
  c_inactive_at: Date;
  c_expires_at: Date;
  c_expired_reason: ExpiredReason | null;
  c_ended_at: Date | null;
}

function view(row: ViewRow): ProxySessionView {
  const session = Object.assign(new ProxySession(), {
    id: row.id,
    serviceId: row.service_id,
    accountId: row.account_id,
    uniqueName: row.unique_name,
    mode: row.mode,
    ttl: row.ttl,
    dateExpiry: row.date_expiry,
    expiresAt: row.expires_at,
    closedAt: row.closed_at,
    closedReason: row.closed_reason,
    deletedAt: row.deleted_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
  const carrier: CarryingSession | null =
    row.c_status === null
      ? null
      : {
          status: row.c_status,
          provider: row.c_provider,
          channels: row.c_channels,
          proxyNumberId: row.c_proxy_number_id,
          proxyNumber: row.c_proxy_number,
          participants: row.c_participants,
          lastInteractionAt: row.c_last_interaction_at,
          inactiveAt: row.c_inactive_at,
          expiresAt: row.c_expires_at,
          expiredReason: row.c_expired_reason,
          endedAt: row.c_ended_at,
        };
  return { session, carrier };
}
