/**
 * The SQL of the session aggregate (sessions and their participant rows), except the reservation, which
 * is the allocator's. A change and the event it causes are written together: `activate` in one statement,
 * the others in one transaction (`transaction`), so a committed change always has its event.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Not, type EntityManager } from 'typeorm';
import { PoolStatements, preparedStatement, runPrepared, type StatementRunner } from '@app/database';
import type { PageCursor } from '../common/pagination/page-cursor';
import {
  DeliveryWakes,
  EventOutbox,
  transactionThenWake,
  type Queryable,
  type SessionEventInput,
  type WakeWarning,
} from '../notifications';
import { Session, type SessionStatus } from './session.entity';

type SessionListStatus = 'active' | 'closed' | 'expired';

export interface SessionPageQuery {
  readonly accountId: string;
  /** A session past its inactiveAt at `now` counts as expired, whether or not the sweeper has marked it. */
  readonly status?: SessionListStatus;
  /** Only the sessions with this uniqueName (at most one of them live). */
  readonly uniqueName?: string;
  /** The broker's clock. */
  readonly now: Date;
  /** Only sessions before this one in the order (newest first). */
  readonly before?: PageCursor;
  readonly limit: number;
}

/** A reservation dropped because the process that made it stopped mid-create. */
export interface DroppedReservation {
  readonly id: string;
  readonly provider: string;
  readonly proxyNumber: string;
}

/** A live session an inbound webhook reached, and where its intercept goes (its own URL, else its account's). */
export interface RoutedSession {
  readonly session: Session;
  readonly interceptUrl: string | null;
}

/** What one transaction can do; its changes and events commit together or not at all. */
export interface SessionTransaction {
  /** The account's session, row-locked until the transaction ends; null when there is none. */
  lock(accountId: string, id: string): Promise<Session | null>;
  /** Up to `limit` active sessions past their inactiveAt at `now`, soonest first, locked; those another replica holds are skipped. */
  lockExpired(limit: number, now: Date): Promise<Session[]>;
  /** The account's active sessions named `uniqueName` that are past their inactiveAt at `now`, locked. */
  lockLapsedNamed(accountId: string, uniqueName: string, now: Date): Promise<Session[]>;
  /**
   * Writes each session's ended status, endedAt and expiredReason, and frees its participants for other sessions (after
   * the quarantine, SESSION_NUMBER_QUARANTINE_SECONDS from endedAt, for anyone but each other on this number).
   */
  end(sessions: readonly Session[]): Promise<void>;
  /** Records an event in the outbox, in this transaction; the delivery workers are woken once it has committed. */
  record(event: SessionEventInput): Promise<void>;
}

/** What the session service and the sweeper need from storage (PostgresSessionRepository; specs use a fake). */
export abstract class SessionRepository {
  abstract transaction<T>(work: (tx: SessionTransaction) => Promise<T>): Promise<T>;
  /** The account's session in any status, pending included; null when there is none. */
  abstract find(accountId: string, id: string): Promise<Session | null>;
  /** Whether the account has a session with this id, in any status (the event history's `?session=`). */
  abstract exists(accountId: string, id: string): Promise<boolean>;
  /** The first session a create with this key activated (a reservation left pending is not one). */
  abstract findCreatedWith(accountId: string, idempotencyKey: string): Promise<Session | null>;
  /** Up to `limit` of the account's sessions, newest first, pending ones left out. */
  abstract page(query: SessionPageQuery): Promise<Session[]>;
  /** Makes the reservation active with its binding and records `event`, both or neither; false when it was no longer pending. */
  abstract activate(session: Session, event: SessionEventInput): Promise<boolean>;
  /** Notes that the session's binding is released (unbound, or nothing to unbind); the first time counts. */
  abstract markReleased(id: string): Promise<void>;
  /** Up to `limit` ended sessions whose binding is not released yet, longest ended first. */
  abstract unreleased(limit: number): Promise<Session[]>;
  /** Removes reservations made (or held, `pendingUntil`) until before `before` that are still pending. */
  abstract dropStaleReservations(before: Date): Promise<DroppedReservation[]>;
  /** Removes the reservations a create with this key left pending (it died; its key was taken over). */
  abstract dropPendingCreatedWith(accountId: string, idempotencyKey: string): Promise<DroppedReservation[]>;
  /**
   * The session, live at `now` (active, before its inactiveAt, swept or not), in which `participant` reaches
   * the other through `proxyNumber` on `provider`; with its intercept URL.
   */
  abstract findActiveFor(provider: string, proxyNumber: string, participant: string, now: Date): Promise<RoutedSession | null>;
  /**
   * The session, live at `now`, that a rescue moved off `proxyNumber` on `provider` and in which `participant` is
   * (docs/design.md#session-rescue): what an inbound on the old number reaches once that provider is back.
   */
  abstract findMovedFrom(provider: string, proxyNumber: string, participant: string, now: Date): Promise<Session | null>;
}

/**
 * The activation and its event in one statement, `broker_activate_session_wake_after` (migrations
 * ActivateSessionFunction, ActivateSessionWakeAfterCommit), parsed and planned once per connection: one round
 * trip, atomic without an explicit transaction. The event's values are the outbox's. Exported for the
 * benchmark, which runs the broker's own statements without the app.
 *
 * When it recorded a delivery, the delivery workers (this replica's and the others', through their LISTEN)
 * are woken by a NOTIFY sent after the activation, as a statement of its own (`DeliveryWakes`): a NOTIFY
 * inside the activation would hold PostgreSQL's database-wide NOTIFY lock through the activation's WAL flush,
 * so creates with a callback would commit one at a time (ActivateSessionWakeAfterCommit). Should it fail, it
 * is told to `warn`, the delivery is committed all the same and the workers' poll sends it, as after a NOTIFY
 * missed while a replica's LISTEN connection was down.
 */
const ACTIVATE = preparedStatement(
  'session.activate',
  `/* session.activate */ SELECT a.changed, a.delivery_url
     FROM broker_activate_session_wake_after($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) AS a`,
);

export async function activateWithEvent(
  runner: Queryable,
  outbox: EventOutbox,
  session: Session,
  event: SessionEventInput,
  warn: WakeWarning,
): Promise<boolean> {
  const { params } = outbox.sessionEventParameters(event);
  const rows = await runPrepared<Array<{ changed: boolean; delivery_url: string | null }>>(runner, ACTIVATE, [
    session.id,
    session.bindingId,
    ...params,
  ]);
  const [{ changed, delivery_url: deliveryUrl }] = rows;
  if (changed) {
    const wakes = new DeliveryWakes();
    wakes.add(deliveryUrl);
    await wakes.send(runner, warn);
  }
  return changed;
}

@Injectable()
export class PostgresSessionRepository implements SessionRepository {
  private readonly logger = new Logger(PostgresSessionRepository.name);
  private readonly warn: WakeWarning = (message) => this.logger.warn(message);

  /** `statements`: where the activation runs alone (straight on the pool in the app, PoolStatements). */
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: EventOutbox,
    @Inject(PoolStatements) private readonly statements: StatementRunner,
  ) {}

  transaction<T>(work: (tx: SessionTransaction) => Promise<T>): Promise<T> {
    return transactionThenWake(this.dataSource, this.warn, (manager, wakes) =>
      work(new PostgresSessionTransaction(manager, this.outbox, wakes)),
    );
  }

  find(accountId: string, id: string): Promise<Session | null> {
    return this.dataSource.getRepository(Session).findOne({ where: { id, accountId } });
  }

  async exists(accountId: string, id: string): Promise<boolean> {
    const [row] = await this.dataSource.query<Array<{ known: boolean }>>(
      'SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1 AND account_id = $2) AS known',
      [id, accountId],
    );
    return row.known;
  }

  findCreatedWith(accountId: string, idempotencyKey: string): Promise<Session | null> {
    return this.dataSource.getRepository(Session).findOne({
      where: { accountId, idempotencyKey, status: Not<SessionStatus>('pending') },
      order: { createdAt: 'ASC' },
    });
  }

  page(query: SessionPageQuery): Promise<Session[]> {
    const qb = this.dataSource
      .getRepository(Session)
      .createQueryBuilder('s')
      .where('s.accountId = :accountId', { accountId: query.accountId })
      .andWhere(`s.status <> 'pending'`)
      .orderBy('s.createdAt', 'DESC')
      .addOrderBy('s.id', 'DESC')
      .limit(query.limit);
    if (query.status === 'active') qb.andWhere(`s.status = 'active' AND s.inactiveAt > :now`, { now: query.now });
    if (query.status === 'closed') qb.andWhere(`s.status = 'closed'`);
    if (query.status === 'expired')
      qb.andWhere(`(s.status = 'expired' OR (s.status = 'active' AND s.inactiveAt <= :now))`, { now: query.now });
    if (query.uniqueName !== undefined) qb.andWhere('s.uniqueName = :uniqueName', { uniqueName: query.uniqueName });
    if (query.before) qb.andWhere('(s.createdAt, s.id) < (:at, :id)', { at: query.before.at, id: query.before.id });
    return qb.getMany();
  }

  activate(session: Session, event: SessionEventInput): Promise<boolean> {
    return activateWithEvent(this.statements, this.outbox, session, event, this.warn);
  }

  async markReleased(id: string): Promise<void> {
    await this.dataSource.query('UPDATE sessions SET released_at = now() WHERE id = $1 AND released_at IS NULL', [id]);
  }

  unreleased(limit: number): Promise<Session[]> {
    return this.dataSource
      .getRepository(Session)
      .createQueryBuilder('s')
      .where(`s.status IN ('closed', 'expired') AND s.releasedAt IS NULL`)
      .orderBy('s.endedAt')
      .limit(limit)
      .getMany();
  }

  dropStaleReservations(before: Date): Promise<DroppedReservation[]> {
    // A reservation held for a session still being assembled (pending_until) is stale only past its hold.
    return this.dropPending('COALESCE(pending_until, created_at) < $1', [before]);
  }

  dropPendingCreatedWith(accountId: string, idempotencyKey: string): Promise<DroppedReservation[]> {
    return this.dropPending('account_id = $1 AND idempotency_key = $2', [accountId, idempotencyKey]);
  }

  /** Deletes the pending sessions that also match `where` (its own `$1`, `$2`, …). */
  private async dropPending(where: string, params: unknown[]): Promise<DroppedReservation[]> {
    // TypeORM answers a DELETE with [rows, affected count], not the rows alone.
    const [dropped] = await this.dataSource.query<[Array<{ id: string; provider: string; proxy_number: string }>, number]>(
      `DELETE FROM sessions WHERE status = 'pending' AND ${where} RETURNING id, provider, proxy_number`,
      params,
    );
    return dropped.map((r) => ({ id: r.id, provider: r.provider, proxyNumber: r.proxy_number }));
  }

  async findActiveFor(provider: string, proxyNumber: string, participant: string, now: Date): Promise<RoutedSession | null> {
    const { entities, raw } = await this.dataSource
      .getRepository(Session)
      .createQueryBuilder('s')
      .innerJoin('session_participants', 'sp', 'sp.session_id = s.id AND sp.active AND sp.expires_at > :now AND sp.number = :participant', {
        participant,
        now,
      })
      .innerJoin('proxy_numbers', 'pn', 'pn.id = sp.proxy_number_id AND pn.provider = :provider AND pn.number = :proxyNumber', {
        provider,
        proxyNumber,
      })
      .innerJoin('accounts', 'a', 'a.id = s.account_id')
      .addSelect('a.intercept_url', 'account_intercept_url')
      .where(`s.status = 'active' AND s.inactive_at > :now`, { now })
      .getRawAndEntities<{ account_intercept_url: string | null }>();
    const [session] = entities;
    if (!session) return null;
    return { session, interceptUrl: session.interceptUrl ?? raw[0]?.account_intercept_url ?? null };
  }

  findMovedFrom(provider: string, proxyNumber: string, participant: string, now: Date): Promise<Session | null> {
    // session_moves (apps/broker/src/rescue): its moved rows are where sessions were; one probe of idx_session_moves_from_number.
    return this.dataSource
      .getRepository(Session)
      .createQueryBuilder('s')
      .innerJoin(
        'session_moves',
        'm',
        `m.session_id = s.id AND m.status = 'moved' AND m.from_provider = :provider AND m.from_proxy_number = :proxyNumber`,
        {
          provider,
          proxyNumber,
        },
      )
      .where(`s.status = 'active' AND s.inactive_at > :now AND :participant = ANY(s.participants)`, { now, participant })
      .orderBy('m.settled_at', 'DESC')
      .getOne();
  }
}

class PostgresSessionTransaction implements SessionTransaction {
  constructor(
    private readonly manager: EntityManager,
    private readonly outbox: EventOutbox,
    private readonly wakes: DeliveryWakes,
  ) {}

  lock(accountId: string, id: string): Promise<Session | null> {
    return this.manager.getRepository(Session).findOne({ where: { id, accountId }, lock: { mode: 'pessimistic_write' } });
  }

  lockExpired(limit: number, now: Date): Promise<Session[]> {
    return this.manager
      .getRepository(Session)
      .createQueryBuilder('s')
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .where(`s.status = 'active' AND s.inactiveAt <= :now`, { now })
      .orderBy('s.inactiveAt')
      .limit(limit)
      .getMany();
  }

  lockLapsedNamed(accountId: string, uniqueName: string, now: Date): Promise<Session[]> {
    return this.manager
      .getRepository(Session)
      .createQueryBuilder('s')
      .setLock('pessimistic_write')
      .where(`s.accountId = :accountId AND s.uniqueName = :uniqueName AND s.status = 'active' AND s.inactiveAt <= :now`, {
        accountId,
        uniqueName,
        now,
      })
      .getMany();
  }

  async end(sessions: readonly Session[]): Promise<void> {
    if (sessions.length === 0) return;
    const ids = sessions.map((s) => s.id);
    await this.manager.query(
      `UPDATE sessions s SET status = e.status, ended_at = e.ended_at, expired_reason = e.expired_reason
         FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[]) AS e(id, status, ended_at, expired_reason)
        WHERE s.id = e.id`,
      [ids, sessions.map((s) => s.status), sessions.map((s) => s.endedAt), sessions.map((s) => s.expiredReason)],
    );
    // A participant left the session when it ended: its quarantine on the number runs from there (a close comes before inactiveAt).
    await this.manager.query(
      `UPDATE session_participants sp SET active = false, expires_at = least(sp.expires_at, e.ended_at)
         FROM unnest($1::uuid[], $2::timestamptz[]) AS e(id, ended_at)
        WHERE sp.session_id = e.id`,
      [ids, sessions.map((s) => s.endedAt)],
    );
  }

  async record(event: SessionEventInput): Promise<void> {
    await this.outbox.record(this.manager, event, this.wakes);
  }
}
