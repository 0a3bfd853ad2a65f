/**
 * The SQL of session rescue (docs/design.md#session-rescue): the moves the breaker leader plans (one row per
 * session and outage), and each move itself, one transaction that claims its row, locks the session, takes a
 * number on the new provider under the pool rule and the participant limit, and writes the session on it with
 * its event, its notices and its queued relays made due, the row settled last: a committed move is whole, and
 * one interrupted by a crash leaves its row pending for the next leader. SessionRescue decides; this class
 * only talks to PostgreSQL. Every time written or compared is the broker's clock (`now`), but `outageStartedAt`,
 * which is the breakers' (when the old provider's breaker opened).
 */
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import { uuidArrayLiteral } from '@app/database';
import { DeliveryWakes, EventOutbox, transactionThenWake, type SessionEventInput, type WakeWarning } from '../notifications';
import { holdsLease, type LeaderFence } from '../providers/provider-state.repository';
import { Session, type PastNumber } from '../sessions/session.entity';
import { SessionMove } from './session-move.entity';

/** An outage a move belongs to: the provider, and when its breaker opened. */
export interface OutageKey {
  readonly provider: string;
  readonly openedAt: Date;
}

/** A claimed move: its row and its session, both locked until the transaction ends, and the account's setting now. */
interface ClaimedMove {
  readonly move: SessionMove;
  readonly session: Session;
  readonly setting: { afterSeconds: number | null; notice: string | null };
}

/** A participant the account holds `held` shared-pool sessions with, at the limit. */
interface HeldParticipant {
  readonly number: string;
  readonly held: number;
}

/** What `takeNumber` did: the session's participants are on the number now (in this transaction), or no number was free. */
type NumberTaken =
  | { readonly taken: true; readonly proxyNumberId: string; readonly proxyNumber: string }
  | { readonly taken: false; readonly overLimit: HeldParticipant | null };

interface MoveTarget {
  readonly provider: string;
  readonly proxyNumberId: string;
  readonly proxyNumber: string;
  /** The new provider's binding; null where it keeps no sessions. */
  readonly bindingId: string | null;
}

interface CompletedMove {
  /** The session as it is now: on its new number, the old one in its history. */
  readonly session: Session;
  /** The notices recorded, then the relays that were queued: each to be attempted now. */
  readonly toSend: string[];
}

/** The lease is not ours any more: nothing of this transaction may commit. */
export class LeadershipLostError extends Error {
  override name = 'LeadershipLostError';
  constructor() {
    super('this replica no longer holds the breaker lease');
  }
}

/** What one move's transaction can do; its changes and event commit together or not at all. */
interface MoveTransaction {
  /** The next pending move of one of `outages` due at `now`, locked with its session; one another replica holds is skipped. */
  claimNext(outages: readonly OutageKey[], now: Date): Promise<ClaimedMove | null>;
  /**
   * Puts the session's participants on a number of `provider` that carries its channels: dedicated to the
   * account first, then the shared pool (within the participant limit), least loaded first; the pool rule's
   * index decides races. Undone by `undoNumber` (the provider then refused to bind it).
   */
  takeNumber(session: Session, provider: string, participantLimit: number, loadOrder: readonly string[], now: Date): Promise<NumberTaken>;
  undoNumber(): Promise<void>;
  /** The move: the session on `target` (the old number into its history), the row settled, the event, the notices, the queued relays due now. */
  complete(claimed: ClaimedMove, target: MoveTarget, input: CompleteInput): Promise<CompletedMove>;
  /** Settles the row as failed or cancelled, with `event` (session.rescue_failed) if given. */
  settle(move: SessionMove, status: 'failed' | 'cancelled', reason: string, now: Date, event?: SessionEventInput): Promise<void>;
  /** Leaves it pending, to be tried again from `nextAttemptAt`. */
  postpone(move: SessionMove, reason: string, nextAttemptAt: Date): Promise<void>;
  /** Throws LeadershipLostError unless `fence` still holds the breaker lease, which it then keeps until the commit. */
  assertLeading(fence: LeaderFence): Promise<void>;
}

interface CompleteInput {
  readonly now: Date;
  readonly reason: string;
  /** Texted to each participant from the new number; null: none. */
  readonly notice: string | null;
  readonly movedBy: string;
  /** `session.rebound`, made from the session as it is now. */
  readonly event: (moved: Session) => SessionEventInput;
}

const UNIQUE_VIOLATION = '23505';
const DEADLOCK = '40P01';
/** Races for one number lost in a row before the move gives that provider up for now. */
const MAX_NUMBER_ATTEMPTS = 8;
const SAVEPOINT = 'rescue_candidate';

/**
 * A number for the session on one provider: the reservation's order and rules (broker_reserve_session) for a
 * session that exists: neither participant active on it, and dedicated to the account, or shared while the
 * account is under the participant limit with both (a session that holds shared slots already keeps them, so
 * it needs no room). `$1` session, `$2` provider, `$3` channels, `$4` account, `$5` participants, `$6` load
 * order, `$7` limit, `$8` now.
 */
const PICK_NUMBER = `/* rescue.pick_number */
  WITH own AS (SELECT sp.shared_slot FROM session_participants sp WHERE sp.session_id = $1 AND sp.active),
       holds AS (SELECT coalesce(bool_and(own.shared_slot IS NOT NULL), false) AS slots FROM own)
  SELECT pn.id, pn.number, pn.account_id IS NULL AS shared
    FROM proxy_numbers pn
         LEFT JOIN unnest($6::uuid[]) WITH ORDINALITY AS lo(number_id, load_rank) ON lo.number_id = pn.id
   WHERE pn.provider = $2 AND pn.enabled AND $3::text[] <@ pn.capabilities
     AND (pn.account_id = $4 OR (pn.account_id IS NULL AND ((SELECT slots FROM holds) OR NOT EXISTS (
           SELECT 1 FROM session_participants sp
            WHERE sp.account_id = $4 AND sp.number = ANY($5::text[]) AND sp.active AND sp.shared_slot IS NOT NULL AND sp.expires_at > $8
            GROUP BY sp.number HAVING count(*) >= $7))))
     AND NOT EXISTS (SELECT 1 FROM session_participants sp
                      WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.expires_at > $8 AND sp.number = ANY($5::text[]))
   ORDER BY pn.account_id IS NULL, lo.load_rank NULLS FIRST, pn.number
   LIMIT 1`;

/**
 * The session's participant rows onto the number: a shared one keeps the slot it held, or takes the lowest free
 * one of 1..limit (as a reservation does; null when none is left: a create took the last one since the pick); a
 * dedicated one holds none. `$1` session, `$2` number, `$3` shared, `$4` limit, `$5` now.
 */
const TAKE_NUMBER = `/* rescue.take_number */
  UPDATE session_participants sp
     SET proxy_number_id = $2,
         shared_slot = CASE WHEN NOT $3 THEN NULL
                            WHEN sp.shared_slot IS NOT NULL THEN sp.shared_slot
                            ELSE (SELECT min(g) FROM (SELECT 1 AS g UNION ALL
                                                      SELECT t.shared_slot + 1 FROM session_participants t
                                                       WHERE t.account_id = sp.account_id AND t.number = sp.number AND t.active
                                                         AND t.shared_slot IS NOT NULL AND t.expires_at > $5) g
                                   WHERE g <= $4 AND NOT EXISTS (SELECT 1 FROM session_participants x
                                                      WHERE x.account_id = sp.account_id AND x.number = sp.number AND x.active
                                                        AND x.expires_at > $5 AND x.shared_slot = g)) END
   WHERE sp.session_id = $1 AND sp.active
  RETURNING sp.shared_slot`;

@Injectable()
export class SessionMoveRepository {
  private readonly logger = new Logger(SessionMoveRepository.name);
  private readonly warn: WakeWarning = (message) => this.logger.warn(message);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: EventOutbox,
  ) {}

  /**
   * A pending move for every active session of `accountIds` on `provider` from this outage that has none yet (a
   * cancelled one does not count); answers how many were added. The sessions are found through the pool rule's
   * index (the active participants of the provider's numbers), so the cost follows the sessions on the provider.
   */
  async plan(outage: OutageKey, accountIds: readonly string[], now: Date, fence: LeaderFence): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await holdsLease(manager, fence))) throw new LeadershipLostError();
      const rows = await manager.query<Array<{ id: string }>>(
        `/* rescue.plan */
         INSERT INTO session_moves (session_id, account_id, from_provider, from_proxy_number_id, from_proxy_number, from_binding_id,
                                    outage_started_at, status, next_attempt_at, created_at)
         SELECT s.id, s.account_id, s.provider, s.proxy_number_id, s.proxy_number, s.binding_id, $2, 'pending', $4, $4
           FROM sessions s
          WHERE s.id IN (SELECT sp.session_id FROM session_participants sp JOIN proxy_numbers pn ON pn.id = sp.proxy_number_id
                          WHERE pn.provider = $1 AND sp.active AND sp.expires_at > $4)
            AND s.provider = $1 AND s.status = 'active' AND s.inactive_at > $4 AND s.account_id = ANY($3::uuid[])
         ON CONFLICT (session_id, from_provider, outage_started_at) WHERE status <> 'cancelled' DO NOTHING
         RETURNING id`,
        [outage.provider, outage.openedAt, accountIds, now],
      );
      return rows.length;
    });
  }

  /** Cancels the pending moves of outages that are over (their provider is not OPEN since that time any more); answers them. */
  async cancelEnded(outages: readonly OutageKey[], now: Date, fence: LeaderFence): Promise<Array<{ fromProvider: string }>> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await holdsLease(manager, fence))) throw new LeadershipLostError();
      const [rows] = await manager.query<[Array<{ from_provider: string }>, number]>(
        `/* rescue.cancel_ended */
         UPDATE session_moves SET status = 'cancelled', settled_at = $3, reason = 'the outage ended before the session was moved'
          WHERE status = 'pending'
            AND (from_provider, outage_started_at) NOT IN (SELECT * FROM unnest($1::text[], $2::timestamptz[]))
         RETURNING from_provider`,
        [outages.map((o) => o.provider), outages.map((o) => o.openedAt), now],
      );
      return rows.map((r) => ({ fromProvider: r.from_provider }));
    });
  }

  /** Whether any move is pending, and whether any moved session's old binding is still to release. */
  async workLeft(): Promise<{ pending: boolean; unreleased: boolean }> {
    const [row] = await this.dataSource.query<Array<{ pending: boolean; unreleased: boolean }>>(
      `/* rescue.work_left */
       SELECT EXISTS (SELECT 1 FROM session_moves WHERE status = 'pending') AS pending,
              EXISTS (SELECT 1 FROM session_moves WHERE status = 'moved' AND from_binding_id IS NOT NULL AND from_released_at IS NULL) AS unreleased`,
    );
    return row;
  }

  async pendingCount(): Promise<number> {
    const [row] = await this.dataSource.query<Array<{ n: number }>>(
      `/* rescue.pending */ SELECT count(*)::int AS n FROM session_moves WHERE status = 'pending'`,
    );
    return row.n;
  }

  /** Up to `limit` moved sessions whose old binding, on one of `providers`, is not released yet. */
  unreleased(providers: readonly string[], limit: number): Promise<SessionMove[]> {
    return this.dataSource
      .getRepository(SessionMove)
      .createQueryBuilder('m')
      .where(`m.status = 'moved' AND m.fromBindingId IS NOT NULL AND m.fromReleasedAt IS NULL AND m.fromProvider IN (:...providers)`, {
        providers,
      })
      .orderBy('m.settledAt')
      .limit(limit)
      .getMany();
  }

  async markReleased(id: string, now: Date): Promise<void> {
    await this.dataSource.query('UPDATE session_moves SET from_released_at = $2 WHERE id = $1 AND from_released_at IS NULL', [id, now]);
  }

  /** Runs `work` in one transaction; the deliveries its events recorded are woken once it has committed. */
  transaction<T>(work: (tx: MoveTransaction) => Promise<T>): Promise<T> {
    return transactionThenWake(this.dataSource, this.warn, (manager, wakes) =>
      work(new PostgresMoveTransaction(manager, this.outbox, wakes)),
    );
  }
}

class PostgresMoveTransaction implements MoveTransaction {
  constructor(
    private readonly manager: EntityManager,
    private readonly outbox: EventOutbox,
    private readonly wakes: DeliveryWakes,
  ) {}

  async claimNext(outages: readonly OutageKey[], now: Date): Promise<ClaimedMove | null> {
    if (outages.length === 0) return null;
    const [row] = await this.manager.query<Array<{ id: string; rescue_after_seconds: number | null; rescue_notice: string | null }>>(
      `/* rescue.claim */
       SELECT m.id, a.rescue_after_seconds, a.rescue_notice
         FROM session_moves m JOIN accounts a ON a.id = m.account_id
        WHERE m.status = 'pending' AND m.next_attempt_at <= $1
          AND (m.from_provider, m.outage_started_at) IN (SELECT * FROM unnest($2::text[], $3::timestamptz[]))
        ORDER BY m.next_attempt_at, m.created_at, m.id
        LIMIT 1
        FOR UPDATE OF m SKIP LOCKED`,
      [now, outages.map((o) => o.provider), outages.map((o) => o.openedAt)],
    );
    if (!row) return null;
    const move = await this.manager.getRepository(SessionMove).findOneByOrFail({ id: row.id });
    const session = await this.manager
      .getRepository(Session)
      .findOneOrFail({ where: { id: move.sessionId }, lock: { mode: 'pessimistic_write' } });
    return { move, session, setting: { afterSeconds: row.rescue_after_seconds, notice: row.rescue_notice } };
  }

  async takeNumber(
    session: Session,
    provider: string,
    participantLimit: number,
    loadOrder: readonly string[],
    now: Date,
  ): Promise<NumberTaken> {
    const numbers = [...session.participants].sort();
    for (let attempt = 1; ; attempt++) {
      await this.manager.query(`SAVEPOINT ${SAVEPOINT}`);
      try {
        const [pick] = await this.manager.query<Array<{ id: string; number: string; shared: boolean }>>(PICK_NUMBER, [
          session.id,
          provider,
          session.channels,
          session.accountId,
          numbers,
          uuidArrayLiteral(loadOrder),
          participantLimit,
          now,
        ]);
        if (!pick) return { taken: false, overLimit: await this.overLimit(session.accountId, numbers, participantLimit, now) };
        const [slots] = await this.manager.query<[Array<{ shared_slot: number | null }>, number]>(TAKE_NUMBER, [
          session.id,
          pick.id,
          pick.shared,
          participantLimit,
          now,
        ]);
        // A create took the account's last slot for one of them since the pick: the limit is reached now.
        if (pick.shared && slots.some((s) => s.shared_slot === null)) {
          await this.undoNumber();
          if (attempt >= MAX_NUMBER_ATTEMPTS)
            return { taken: false, overLimit: await this.overLimit(session.accountId, numbers, participantLimit, now) };
          continue;
        }
        return { taken: true, proxyNumberId: pick.id, proxyNumber: pick.number };
      } catch (error) {
        const code = sqlState(error);
        if (attempt >= MAX_NUMBER_ATTEMPTS || (code !== UNIQUE_VIOLATION && code !== DEADLOCK)) throw error;
        await this.undoNumber();
        // A participant row past its session's end, unswept, still holds the index: freed as a reservation frees it.
        if (code === UNIQUE_VIOLATION) await this.freeLapsed(provider, session.accountId, numbers, now);
      }
    }
  }

  async undoNumber(): Promise<void> {
    await this.manager.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
  }

  async complete(claimed: ClaimedMove, target: MoveTarget, input: CompleteInput): Promise<CompletedMove> {
    const { move, session } = claimed;
    const { now } = input;
    const past: PastNumber = {
      provider: session.provider,
      proxyNumber: session.proxyNumber,
      since:
        session.numberHistory.length > 0 ? session.numberHistory[session.numberHistory.length - 1].until : session.createdAt.toISOString(),
      until: now.toISOString(),
    };
    await this.manager.query(
      `/* rescue.move_session */
       UPDATE sessions SET provider = $2, proxy_number_id = $3, proxy_number = $4, binding_id = $5, number_history = number_history || $6::jsonb
        WHERE id = $1`,
      [session.id, target.provider, target.proxyNumberId, target.proxyNumber, target.bindingId, JSON.stringify([past])],
    );
    const moved: Session = {
      ...session,
      provider: target.provider,
      proxyNumberId: target.proxyNumberId,
      proxyNumber: target.proxyNumber,
      bindingId: target.bindingId,
      numberHistory: [...session.numberHistory, past],
    };
    // Recorded as a message from the app would be: the new number to each participant, due now, retried like a relay.
    const notices =
      input.notice !== null && session.channels.includes('sms')
        ? await this.manager.query<Array<{ id: string }>>(
            `/* rescue.notice */
             INSERT INTO interactions (session_id, channel, from_number, to_number, text, status, attempts, next_attempt_at, created_at, updated_at)
             SELECT $1, 'sms', $2, p.number, $3, 'pending', 0, $4, $4, $4 FROM unnest($5::text[]) WITH ORDINALITY AS p(number, n)
             ORDER BY p.n
             RETURNING id`,
            [session.id, target.proxyNumber, input.notice, now, session.participants],
          )
        : [];
    // Relays that waited on the old provider go out through the new one at once (docs/design.md#session-rescue); a
    // message from the app among them is from the new number now, as it will be sent.
    const [queued] = await this.manager.query<[Array<{ id: string }>, number]>(
      `/* rescue.queued_relays */
       UPDATE interactions SET next_attempt_at = $2, from_number = CASE WHEN from_number = $4 THEN $5 ELSE from_number END
        WHERE session_id = $1 AND status = 'pending' AND NOT (id = ANY($3::uuid[]))
       RETURNING id`,
      [session.id, now, notices.map((n) => n.id), session.proxyNumber, target.proxyNumber],
    );
    await this.manager.query(
      `/* rescue.moved */
       UPDATE session_moves SET status = 'moved', to_provider = $2, to_proxy_number_id = $3, to_proxy_number = $4, reason = $5,
              attempts = attempts + 1, settled_at = $6, moved_by = $7
        WHERE id = $1`,
      [move.id, target.provider, target.proxyNumberId, target.proxyNumber, input.reason, now, input.movedBy],
    );
    await this.outbox.record(this.manager, input.event(moved), this.wakes);
    return { session: moved, toSend: [...notices.map((n) => n.id), ...queued.map((q) => q.id)] };
  }

  async settle(move: SessionMove, status: 'failed' | 'cancelled', reason: string, now: Date, event?: SessionEventInput): Promise<void> {
    await this.manager.query(
      `/* rescue.settle */ UPDATE session_moves SET status = $2, reason = $3, settled_at = $4, attempts = attempts + $5 WHERE id = $1`,
      [move.id, status, reason, now, status === 'failed' ? 1 : 0],
    );
    if (event) await this.outbox.record(this.manager, event, this.wakes);
  }

  async postpone(move: SessionMove, reason: string, nextAttemptAt: Date): Promise<void> {
    await this.manager.query(
      `/* rescue.postpone */ UPDATE session_moves SET reason = $2, next_attempt_at = $3, attempts = attempts + 1 WHERE id = $1`,
      [move.id, reason, nextAttemptAt],
    );
  }

  async assertLeading(fence: LeaderFence): Promise<void> {
    if (!(await holdsLease(this.manager, fence))) throw new LeadershipLostError();
  }

  /** The first participant the account holds `limit` shared-pool sessions with, if that is why no number was free. */
  private async overLimit(accountId: string, numbers: string[], limit: number, now: Date): Promise<HeldParticipant | null> {
    const [row] = await this.manager.query<Array<{ number: string; held: number }>>(
      `SELECT sp.number, count(*)::int AS held FROM session_participants sp
        WHERE sp.account_id = $1 AND sp.number = ANY($2::text[]) AND sp.active AND sp.shared_slot IS NOT NULL AND sp.expires_at > $4
        GROUP BY sp.number HAVING count(*) >= $3 ORDER BY sp.number LIMIT 1`,
      [accountId, numbers, limit, now],
    );
    return row ?? null;
  }

  private async freeLapsed(provider: string, accountId: string, numbers: string[], now: Date): Promise<void> {
    await this.manager.query(
      `UPDATE session_participants sp SET active = false
        WHERE sp.active AND sp.expires_at <= $4 AND sp.number = ANY($2::text[])
          AND (sp.account_id = $3 OR sp.proxy_number_id IN (SELECT id FROM proxy_numbers WHERE provider = $1))`,
      [provider, numbers, accountId, now],
    );
  }
}

function sqlState(error: unknown): string | undefined {
  return error instanceof QueryFailedError ? (error.driverError as { code?: string })?.code : undefined;
}
