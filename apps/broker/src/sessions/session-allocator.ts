import { Inject, Injectable } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';
import type { Channel } from '../numbers/proxy-number.entity';
import { PoolUsage } from '../providers/pool-usage';
import { SessionReservationRepository, type ReservationInput, type ReservationRow } from './session-reservation.repository';
import { Session } from './session.entity';

export interface ReservationRequest {
  accountId: string;
  provider: string;
  channel: Channel;
  participants: [string, string];
  ttlSeconds: number;
  callbackUrl: string | null;
  metadata: Record<string, unknown>;
  idempotencyKey: string | null;
}

/** No enabled number on the provider can take these two participants. */
export class PoolExhaustedError extends Error {
  override name = 'PoolExhaustedError';
  constructor(readonly provider: string) {
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

const UNIQUE_VIOLATION = '23505';
const DEADLOCK = '40P01';
const MAX_ATTEMPTS = 8;

export { RESERVE_SQL } from './session-reservation.repository';

/**
 * Reserves a proxy number on one provider for a new session, keeping the pool rule: the least
 * loaded number where neither participant already has an active session. The database enforces
 * the rule (a partial unique index), so replicas racing for the same number cannot both win: the
 * loser's insert fails and it picks again. The reservation is a `pending` session, made `active`
 * once the provider has bound the number, or removed if it could not.
 *
 * Fair use: numbers dedicated to the account come first and only ever serve it; on the shared pool
 * the account holds at most SESSION_PARTICIPANT_LIMIT active sessions per participant number,
 * checked inside the reservation and held by a unique index on the limit's slots, so concurrent
 * creates cannot pass it (SessionReservationRepository).
 *
 * Load comes from PoolUsage (read every few seconds, plus this replica's own reservations), so a
 * create does not count every active session. A participant whose old session on a number has
 * passed its expiresAt but not been swept yet is freed when its row gets in the way.
 */
@Injectable()
export class SessionAllocator {
  private readonly participantLimit: number;

  constructor(
    private readonly reservations: SessionReservationRepository,
    private readonly pool: PoolUsage,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    metrics: BrokerMetrics,
  ) {
    this.participantLimit = config.sessions.participantLimit;
    metrics.limits.set({ limit: 'session_participant_limit' }, this.participantLimit);
  }

  async reserve(request: ReservationRequest): Promise<Session> {
    // Sorted, so two creates for the same pair take the index entries in the same order.
    const numbers = [...request.participants].sort();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.tryReserve(request, numbers);
      } catch (error) {
        const code = sqlState(error);
        if (attempt >= MAX_ATTEMPTS || (code !== UNIQUE_VIOLATION && code !== DEADLOCK)) throw error;
        if (code === UNIQUE_VIOLATION) await this.reservations.freeExpired(request.provider, request.accountId, numbers);
      }
    }
  }

  /** Removes a reservation whose binding failed: nothing half-made is left behind. */
  release(sessionId: string): Promise<void> {
    return this.reservations.release(sessionId);
  }

  private async tryReserve(request: ReservationRequest, numbers: string[]): Promise<Session> {
    const input: ReservationInput = {
      accountId: request.accountId,
      provider: request.provider,
      channel: request.channel,
      sortedNumbers: numbers,
      participants: request.participants,
      loadOrder: this.pool.loadOrder(),
      ttlSeconds: request.ttlSeconds,
      callbackUrl: request.callbackUrl,
      metadata: request.metadata,
      idempotencyKey: request.idempotencyKey,
      participantLimit: this.participantLimit,
    };
    const result = await this.reservations.reserve(input);
    if (!result.reserved) {
      if (result.overLimit)
        throw new ParticipantLimitError(request.provider, result.overLimit.number, result.overLimit.held, this.participantLimit);
      throw new PoolExhaustedError(request.provider);
    }
    this.pool.noteReserved(result.reserved.proxyNumberId);
    return pendingSession(input, result.reserved);
  }
}

function sqlState(error: unknown): string | undefined {
  return error instanceof QueryFailedError ? (error.driverError as { code?: string })?.code : undefined;
}

/** The pending session a reservation made, as the allocator hands it on (no binding yet). */
export function pendingSession(input: ReservationInput, row: ReservationRow): Session {
  return Object.assign(new Session(), {
    id: row.id,
    accountId: input.accountId,
    channel: input.channel,
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
    endedAt: null,
    releasedAt: null,
    idempotencyKey: input.idempotencyKey,
  });
}
