/**
 * The SQL of a reservation: a proxy number and a `pending` session for two participants (or, on a provider that
 * keeps no sessions, the `active` session and its `session.created` event at once: `create`), the
 * removal of a reservation whose binding failed, and the freeing of participants whose sessions
 * passed their inactiveAt (expiresAt or the idle deadline) unswept. SessionAllocator decides when, on the
 * broker's clock; this class only talks to PostgreSQL.
 *
 * A reservation is one statement (RESERVE_SQL, a call of the function `broker_reserve_session`). It picks a shared number only where the account
 * holds fewer than SESSION_PARTICIPANT_LIMIT shared-pool sessions with both participants, and gives
 * each participant row the lowest free slot of 1..limit for (account, number). A partial unique
 * index on the slots makes the limit exact under concurrent creates on any number of replicas: two
 * creates that both saw room for one more take the same slot, and the second one's insert fails
 * (a unique violation, retried by SessionAllocator: it then sees the limit reached).
 *
 * The quarantine (SESSION_NUMBER_QUARANTINE_SECONDS) is in the same statement: a number either participant shared,
 * within the quarantine before `now`, with someone other than the other participant is no candidate (each
 * participant row knows its partner, and its `expires_at` is when the participant left the session), so replicas
 * cannot race past it. When nothing was reserved the answer says how many numbers the quarantine alone held.
 *
 * Both the limit and the slot search read only the participant rows' own `account_id` and
 * `shared_slot` (a slot is given exactly when the number was shared at reservation), through the
 * slots' index: no join to sessions or proxy_numbers. The lowest free slot is looked for among 1 and
 * each taken slot + 1, so its cost follows the slots held, not the limit (a `generate_series` over
 * 1..limit probed the index once per slot: 1 000 probes per participant at a limit of 1 000).
 *
 * The reservation commits without waiting for its WAL flush (`synchronous_commit` off for its own
 * transaction only: RESERVE_SQL runs alone, never inside a wider transaction). No answer depends on
 * it alone: a 201 follows the activation, whose synchronous commit flushes the WAL up to itself, so
 * the reservation's too (WAL is flushed in order). A crash of PostgreSQL within the flush delay may
 * lose a reservation whose create has not answered yet: that create fails (its activation finds no
 * database, then no pending row), as it would if the crash came a moment earlier; visibility to other
 * creates (the pool rule, the limit's slots) is at commit either way. One WAL flush less per create.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { PoolStatements, preparedStatement, runPrepared, uuidArrayLiteral, type StatementRunner } from '@app/database';
import { DeliveryWakes, EventOutbox, type SessionEventInput, type WakeWarning } from '../notifications';
import type { Channel } from '../numbers/proxy-number.entity';

/**
 * One statement: `broker_reserve_session` (migrations ReserveSessionFunction, ConversationSessions, NumberQuarantine,
 * CreateInOneStatement) takes the
 * first eligible number (enabled, carrying every channel of the session, neither participant active on it,
 * and either dedicated to this account or shared while the account is under its participant limit with both
 * numbers) with the first participant's most recent number first when asked (`prefer-sticky`), then
 * dedicated numbers, then in load order, and writes the pending session (its id `$18`) and its two participant rows. When
 * it reserved nothing, its row (if any) names the participant the account holds `$11` shared-pool sessions
 * with, and `quarantined` the numbers the quarantine (`$17` seconds back from `$12`) held for these participants. Every
 * time it writes or compares is `$12`, the broker's clock. The function keeps its plans for the
 * connection's life: a create pays neither parse nor plan for it, and this call is a prepared statement
 * (RESERVE), parsed once per connection too. One statement whatever the number of channels.
 */
export const RESERVE_SQL = `/* session.reserve */
  SELECT r.id, r.proxy_number_id, r.proxy_number, r.created_at, r.expires_at, r.inactive_at, r.over_limit_number, r.over_limit_held,
         r.quarantined
    FROM broker_reserve_session($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, 'pending') AS r,
         (SELECT set_config('synchronous_commit', 'off', true)) AS commit_without_flush`;

const RESERVE = preparedStatement('session.reserve', RESERVE_SQL);

/**
 * A create with no provider call, one statement and one commit (migration CreateInOneStatement; one PL/pgSQL function
 * since CreateWithoutNestedCall, the reservation's statements its own): the reservation's
 * eighteen parameters, then the `session.created` event's ten (EventOutbox's, in its order), and the session is
 * written `active` with its event and the event's delivery; the answer is the reservation's, with the delivery's
 * URL. It commits durably (no `synchronous_commit` off): the 201 follows it.
 */
const CREATE = preparedStatement(
  'session.create',
  `/* session.create */
  SELECT c.id, c.proxy_number_id, c.proxy_number, c.created_at, c.expires_at, c.inactive_at, c.over_limit_number, c.over_limit_held,
         c.quarantined, c.delivery_url
    FROM broker_create_session($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
                               $19, $20, $21, $22, $23, $24, $25, $26, $27, $28) AS c`,
);

export interface ReservationRow {
  id: string;
  proxyNumberId: string;
  proxyNumber: string;
  createdAt: Date;
  expiresAt: Date;
  inactiveAt: Date;
}

export interface ReservationInput {
  /** The session's id, chosen by the broker (so an event written in the same statement can name it). */
  sessionId: string;
  accountId: string;
  provider: string;
  /** Voice first: the spelling the sessions table keeps. */
  channels: Channel[];
  /** Sorted, so two creates for the same pair take the index entries in the same order. */
  sortedNumbers: string[];
  participants: [string, string];
  /** The provider's proxy number ids, least loaded first (PoolUsage; another provider's ids would match nothing). */
  loadOrder: string[];
  ttlSeconds: number;
  callbackUrl: string | null;
  metadata: Record<string, unknown>;
  idempotencyKey: string | null;
  participantLimit: number;
  /** SESSION_NUMBER_QUARANTINE_SECONDS: how long after a session ends its number and participants meet no one else. */
  quarantineSeconds: number;
  /** The broker's clock: the session's createdAt, and the moment the pool rule and the limit are read at. */
  now: Date;
  /** Unset: none (likewise below). */
  idleTtlSeconds?: number | null;
  uniqueName?: string | null;
  interceptUrl?: string | null;
  /** Rank the first participant's most recent number (with this account) first, where it is eligible. */
  preferSticky?: boolean;
}

/** A participant number the account holds `held` shared-pool sessions with, at or above the limit. */
interface HeldParticipant {
  number: string;
  held: number;
}

/** Nothing reserved: whether the participant limit was why, and how many numbers the quarantine alone held. */
export type ReservationResult = { reserved: ReservationRow } | { reserved: null; overLimit: HeldParticipant | null; quarantined: number };

/** Reserved: the first six are set. Refused: the last three (over the limit, numbers held by the quarantine). Nothing free: no row. */
interface RawReservation {
  id: string | null;
  proxy_number_id: string;
  proxy_number: string;
  created_at: Date;
  expires_at: Date;
  inactive_at: Date;
  over_limit_number: string | null;
  over_limit_held: number | null;
  quarantined: number | null;
}

@Injectable()
export class SessionReservationRepository {
  private readonly logger = new Logger(SessionReservationRepository.name);
  private readonly warn: WakeWarning = (message) => this.logger.warn(message);

  /** `statements`: each of these runs alone, outside any transaction; in the app straight on the pool (PoolStatements), or a DataSource. */
  constructor(
    @Inject(PoolStatements) private readonly statements: StatementRunner,
    private readonly outbox: EventOutbox,
  ) {}

  /** Reserves; when nothing was free, says whether the participant limit was why. */
  async reserve(input: ReservationInput): Promise<ReservationResult> {
    return asResult(await runPrepared<RawReservation[]>(this.statements, RESERVE, reservationParameters(input)));
  }

  /**
   * Reserves and makes the session active with `event` (its `session.created`, whose `data.session.proxyNumber` the
   * statement fills in), in one statement and one commit; the delivery workers are woken after it, as after an
   * activation (activateWithEvent). For a provider that keeps no sessions: there is no bind to wait for.
   */
  async create(input: ReservationInput, event: SessionEventInput): Promise<ReservationResult> {
    const { params } = this.outbox.sessionEventParameters(event);
    const rows = await runPrepared<Array<RawReservation & { delivery_url: string | null }>>(this.statements, CREATE, [
      ...reservationParameters(input),
      ...params,
    ]);
    const result = asResult(rows);
    if (result.reserved) {
      const wakes = new DeliveryWakes();
      wakes.add(rows[0].delivery_url);
      await wakes.send(this.statements, this.warn);
    }
    return result;
  }

  /** Removes a reservation whose binding failed: nothing half-made is left behind. */
  async release(sessionId: string): Promise<void> {
    await this.statements.query(`DELETE FROM sessions WHERE id = $1 AND status = 'pending'`, [sessionId]);
  }

  /**
   * A session is inactive from its inactiveAt on (expiresAt, or sooner its idle deadline), swept or not:
   * at `now` on the broker's clock its participants' rows stop counting, on this provider's numbers (the
   * pool rule) and in this account's slots (the participant limit).
   */
  async freeExpired(provider: string, accountId: string, numbers: string[], now: Date): Promise<void> {
    await this.statements.query(
      `UPDATE session_participants sp SET active = false
        WHERE sp.active AND sp.expires_at <= $4 AND sp.number = ANY($2::text[])
          AND (sp.account_id = $3 OR sp.proxy_number_id IN (SELECT id FROM proxy_numbers WHERE provider = $1))`,
      [provider, numbers, accountId, now],
    );
  }
}

/** The reservation's parameters, `$1` to `$18`, in the function's order (RESERVE_SQL's, and the first eighteen of a create). */
export function reservationParameters(input: ReservationInput): unknown[] {
  return [
    input.provider,
    input.channels,
    input.sortedNumbers,
    uuidArrayLiteral(input.loadOrder),
    input.accountId,
    input.participants,
    input.callbackUrl,
    JSON.stringify(input.metadata),
    input.ttlSeconds,
    input.idempotencyKey,
    input.participantLimit,
    input.now,
    input.idleTtlSeconds ?? null,
    input.uniqueName ?? null,
    input.interceptUrl ?? null,
    input.preferSticky ?? false,
    input.quarantineSeconds,
    input.sessionId,
  ];
}

function asResult(rows: RawReservation[]): ReservationResult {
  const [row] = rows;
  if (row?.id == null) {
    const overLimit = row?.over_limit_number != null ? { number: row.over_limit_number, held: Number(row.over_limit_held) } : null;
    return { reserved: null, overLimit, quarantined: row?.quarantined ?? 0 };
  }
  return {
    reserved: {
      id: row.id,
      proxyNumberId: row.proxy_number_id,
      proxyNumber: row.proxy_number,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      inactiveAt: row.inactive_at,
    },
  };
}
