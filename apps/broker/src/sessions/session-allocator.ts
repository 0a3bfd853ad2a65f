import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';
import type { Channel } from '../numbers/proxy-number.entity';
import { PoolUsage } from '../providers/pool-usage';
import {
  SessionReservationRepository,
  type ReservationInput,
  type ReservationResult,
  type ReservationRow,
} from './session-reservation.repository';
import { sessionCreated } from './session-events';
import { expireLapsed } from './expire-lapsed';
import { Session } from './session.entity';
import { SessionRepository } from './session.repository';

export interface ReservationRequest {
  accountId: string;
  provider: string;
  /** Voice first, no repeats. */
  channels: Channel[];
  participants: [string, string];
  ttlSeconds: number;
  idleTtlSeconds: number | null;
  callbackUrl: string | null;
  metadata: Record<string, unknown>;
  idempotencyKey: string | null;
  uniqueName: string | null;
  interceptUrl: string | null;
  preferSticky: boolean;
}

/**
 * No enabled number on the provider can take these two participants; `quarantined` of them were held by the
 * quarantine alone (SESSION_NUMBER_QUARANTINE_SECONDS: one of the two had a session there with someone else lately).
 */
export class PoolExhaustedError extends Error {
  override name = 'PoolExhaustedError';
  constructor(
    readonly provider: string,
    readonly quarantined = 0,
  ) {
    super(`no proxy number on ${provider} is free for these participants`);
  }
}

/**
 * The account already holds SESSION_PARTICIPANT_LIMIT active sessions with `number` on the shared
 * pool, and none of its dedicated numbers is free.
 */
export class ParticipantLimitError extends Error {
  override name = 'ParticipantLimitError';
  constructor(
    readonly provider: string,
    readonly number: string,
    readonly held: number,
    readonly limit: number,
  ) {
    super(`the account holds ${held} active sessions with ${number} on the shared pool (limit ${limit})`);
  }
}

/** Another live session of the account already has this uniqueName. */
export class UniqueNameTakenError extends Error {
  override name = 'UniqueNameTakenError';
  constructor(readonly uniqueName: string) {
    super(`the account has a live session named ${JSON.stringify(uniqueName)}`);
  }
}

const UNIQUE_VIOLATION = '23505';
/** The index that keeps one live session per uniqueName and account (Session entity). */
const UNIQUE_NAME_INDEX = 'uq_sessions_live_unique_name';
const DEADLOCK = '40P01';
const MAX_ATTEMPTS = 8;

/**
 * Reserves a proxy number on one provider for a new session, keeping the pool rule: the least
 * loaded number where neither participant already has an active session. The database enforces
 * the rule (a partial unique index), so replicas racing for the same number cannot both win: the
 * loser's insert fails and it picks again. The reservation is a `pending` session, made `active`
 * once the provider has bound the number, or removed if it could not.
 *
 * A number either participant shared with someone else within SESSION_NUMBER_QUARANTINE_SECONDS is no candidate,
 * checked in the same statement (SessionReservationRepository), so an old masked number never reaches a stranger.
 *
 * Fair use: numbers dedicated to the account come first and only ever serve it; on the shared pool
 * the account holds at most SESSION_PARTICIPANT_LIMIT active sessions per participant number,
 * checked inside the reservation and held by a unique index on the limit's slots, so concurrent
 * creates cannot pass it (SessionReservationRepository).
 *
 * Load comes from PoolUsage (read every few seconds, plus this replica's own reservations), so a
 * create does not count every active session. A participant whose old session on a number has
 * passed its inactiveAt (expiresAt, or its idle deadline) but not been swept yet is freed when its row
 * gets in the way; so is a uniqueName whose session has: that session is expired then, as the sweeper
 * would, and the name taken. Every time comes from the broker's clock.
 */
@Injectable()
export class SessionAllocator {
  private readonly participantLimit: number;
  private readonly quarantineSeconds: number;

  constructor(
    private readonly reservations: SessionReservationRepository,
    private readonly pool: PoolUsage,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    metrics: BrokerMetrics,
    private readonly sessions: SessionRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.participantLimit = config.sessions.participantLimit;
    this.quarantineSeconds = config.sessions.numberQuarantineSeconds;
    metrics.limits.set({ limit: 'session_participant_limit' }, this.participantLimit);
    metrics.limits.set({ limit: 'session_number_quarantine_seconds' }, this.quarantineSeconds);
  }

  /** A pending session on a number reserved for the provider to bind; `SessionRepository.activate` makes it active. */
  reserve(request: ReservationRequest): Promise<Session> {
    return this.allocate(request, async (input) => {
      const result = await this.reservations.reserve(input);
      return result.reserved ? pendingSession(input, result.reserved) : result;
    });
  }

  /**
   * An active session with its `session.created` event, in one statement and one commit: for a provider that keeps
   * no sessions (no bind to wait for, nothing a crash in it could leave behind).
   */
  create(request: ReservationRequest): Promise<Session> {
    return this.allocate(request, async (input) => {
      // The event is written by the same statement, before the number is known: the statement fills it in.
      const draft = activeDraft(input);
      const result = await this.reservations.create(input, sessionCreated(draft));
      return result.reserved ? activeSession(input, result.reserved) : result;
    });
  }

  /** Removes a reservation whose binding failed: nothing half-made is left behind. */
  release(sessionId: string): Promise<void> {
    return this.reservations.release(sessionId);
  }

  /** Runs `write` for the request on the broker's clock, retrying what a retry can fix; a refusal becomes its typed error. */
  private async allocate(request: ReservationRequest, write: (input: ReservationInput) => Promise<Session | Refusal>): Promise<Session> {
    // Sorted, so two creates for the same pair take the index entries in the same order.
    const numbers = [...request.participants].sort();
    const sessionId = randomUUID();
    for (let attempt = 1; ; attempt++) {
      const now = new Date(this.clock.now());
      try {
        const written = await write(this.input(request, sessionId, numbers, now));
        if (written instanceof Session) {
          this.pool.noteReserved(request.provider, written.proxyNumberId);
          return written;
        }
        if (written.overLimit)
          throw new ParticipantLimitError(request.provider, written.overLimit.number, written.overLimit.held, this.participantLimit);
        throw new PoolExhaustedError(request.provider, written.quarantined);
      } catch (error) {
        const code = sqlState(error);
        if (code === UNIQUE_VIOLATION && constraintOf(error) === UNIQUE_NAME_INDEX && request.uniqueName !== null) {
          // Taken by a live session, or by one past its end that the sweeper has not marked yet: that one is expired now.
          const freed = await expireLapsed(this.sessions, now, (tx) => tx.lockLapsedNamed(request.accountId, request.uniqueName!, now));
          if (freed === 0 || attempt >= MAX_ATTEMPTS) throw new UniqueNameTakenError(request.uniqueName);
          continue;
        }
        if (attempt >= MAX_ATTEMPTS || (code !== UNIQUE_VIOLATION && code !== DEADLOCK)) throw error;
        if (code === UNIQUE_VIOLATION) await this.reservations.freeExpired(request.provider, request.accountId, numbers, now);
      }
    }
  }

  private input(request: ReservationRequest, sessionId: string, numbers: string[], now: Date): ReservationInput {
    return {
      sessionId,
      accountId: request.accountId,
      provider: request.provider,
      channels: request.channels,
      sortedNumbers: numbers,
      participants: request.participants,
      loadOrder: this.pool.loadOrder(request.provider),
      ttlSeconds: request.ttlSeconds,
      callbackUrl: request.callbackUrl,
      metadata: request.metadata,
      idempotencyKey: request.idempotencyKey,
      participantLimit: this.participantLimit,
      quarantineSeconds: this.quarantineSeconds,
      now,
      idleTtlSeconds: request.idleTtlSeconds,
      uniqueName: request.uniqueName,
      interceptUrl: request.interceptUrl,
      preferSticky: request.preferSticky,
    };
  }
}

/** What a reservation that wrote nothing said. */
type Refusal = Extract<ReservationResult, { reserved: null }>;

/**
 * The row the reservation will write, but for its number: its times as broker_reserve_session works them out from
 * `now` (whole seconds: the API takes no fractions), the deadline the earlier of the ttl and the idle TTL.
 */
function draftRow(input: ReservationInput): ReservationRow {
  const at = input.now.getTime();
  const expiresAt = at + input.ttlSeconds * 1000;
  const inactiveAt = input.idleTtlSeconds == null ? expiresAt : Math.min(expiresAt, at + input.idleTtlSeconds * 1000);
  return {
    id: input.sessionId,
    proxyNumberId: '',
    proxyNumber: '',
    createdAt: input.now,
    expiresAt: new Date(expiresAt),
    inactiveAt: new Date(inactiveAt),
  };
}

function sqlState(error: unknown): string | undefined {
  return error instanceof QueryFailedError ? (error.driverError as { code?: string })?.code : undefined;
}

/** The constraint (or unique index) a violation names. */
function constraintOf(error: unknown): string | undefined {
  return error instanceof QueryFailedError ? (error.driverError as { constraint?: string })?.constraint : undefined;
}

/**
 * The session a create on a provider without sessions will write, but for its number (`session.created` is built
 * from it before the statement that picks the number and fills it in).
 */
export function activeDraft(input: ReservationInput): Session {
  return activeSession(input, draftRow(input));
}

/** The session a create on a provider without sessions made: active from the start, nothing to bind. */
function activeSession(input: ReservationInput, row: ReservationRow): Session {
  return Object.assign(pendingSession(input, row), { status: 'active' as const });
}

/** The pending session a reservation made, as the allocator hands it on (no binding yet). */
export function pendingSession(input: ReservationInput, row: ReservationRow): Session {
  return Object.assign(new Session(), {
    id: row.id,
    accountId: input.accountId,
    channels: [...input.channels],
    status: 'pending' as const,
    provider: input.provider,
    proxyNumberId: row.proxyNumberId,
    proxyNumber: row.proxyNumber,
    participants: [...input.participants],
    bindingId: null,
    callbackUrl: input.callbackUrl,
    metadata: input.metadata,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    idleTtlSeconds: input.idleTtlSeconds ?? null,
    lastInteractionAt: null,
    inactiveAt: row.inactiveAt,
    expiredReason: null,
    uniqueName: input.uniqueName ?? null,
    interceptUrl: input.interceptUrl ?? null,
    endedAt: null,
    releasedAt: null,
    pendingUntil: null,
    idempotencyKey: input.idempotencyKey,
    numberHistory: [],
  });
}
