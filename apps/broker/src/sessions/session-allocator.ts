import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import type { Channel } from '../numbers/proxy-number.entity';
import { Session } from './session.entity';

export interface ReservationRequest {
  accountId: string;
  provider: string;
  channel: Channel;
  participants: [string, string];
  ttlSeconds: number;
  callbackUrl: string | null;
  metadata: Record<string, unknown>;
}

/** No enabled number on the provider can take these two participants. */
export class PoolExhaustedError extends Error {
  override name = 'PoolExhaustedError';
  constructor(readonly provider: string) {
    super(`no proxy number on ${provider} is free for these participants`);
  }
}

const UNIQUE_VIOLATION = '23505';
const MAX_ATTEMPTS = 8;

/**
 * Reserves a proxy number on one provider for a new session, keeping the pool rule: the number
 * least loaded among those where neither participant already has an active session. The database
 * enforces the rule (a partial unique index), so replicas racing for the same number cannot both
 * win: the loser's insert fails and it picks again. The reservation is a `pending` session, made
 * `active` once the provider has bound the number, or removed if it could not.
 */
@Injectable()
export class SessionAllocator {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async reserve(request: ReservationRequest): Promise<Session> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.tryReserve(request);
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }

  /** Removes a reservation whose binding failed: nothing half-made is left behind. */
  async release(sessionId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM sessions WHERE id = $1 AND status = 'pending'`, [sessionId]);
  }

  private tryReserve(request: ReservationRequest): Promise<Session> {
    return this.dataSource.transaction(async (manager) => {
      // A session is inactive from expiresAt on, swept or not: free its participants now.
      await manager.query(
        `UPDATE session_participants sp SET active = false
          WHERE sp.active AND sp.expires_at <= now() AND sp.number = ANY($2::text[])
            AND sp.proxy_number_id IN (SELECT id FROM proxy_numbers WHERE provider = $1)`,
        [request.provider, request.participants],
      );
      const candidates: Array<{ id: string; number: string }> = await manager.query(
        `SELECT pn.id, pn.number FROM proxy_numbers pn
          WHERE pn.provider = $1 AND pn.enabled AND $2 = ANY(pn.capabilities)
            AND NOT EXISTS (SELECT 1 FROM session_participants sp
                             WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.number = ANY($3::text[]))
          ORDER BY (SELECT count(*) FROM session_participants sp WHERE sp.proxy_number_id = pn.id AND sp.active), pn.number
          LIMIT 1`,
        [request.provider, request.channel, request.participants],
      );
      if (candidates.length === 0) throw new PoolExhaustedError(request.provider);
      const [number] = candidates;
      const [row]: Array<{ id: string; created_at: Date; expires_at: Date }> = await manager.query(
        `INSERT INTO sessions (account_id, channel, status, provider, proxy_number_id, proxy_number, participants, callback_url, metadata, expires_at)
         VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))
         RETURNING id, created_at, expires_at`,
        [
          request.accountId,
          request.channel,
          request.provider,
          number.id,
          number.number,
          request.participants,
          request.callbackUrl,
          JSON.stringify(request.metadata),
          request.ttlSeconds,
        ],
      );
      await manager.query(
        `INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at)
         SELECT $1, unnest($2::text[]), $3, true, $4`,
        [row.id, request.participants, number.id, row.expires_at],
      );
      return Object.assign(new Session(), {
        id: row.id,
        accountId: request.accountId,
        channel: request.channel,
        status: 'pending' as const,
        provider: request.provider,
        proxyNumberId: number.id,
        proxyNumber: number.number,
        participants: [...request.participants],
        bindingId: null,
        callbackUrl: request.callbackUrl,
        metadata: request.metadata,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        endedAt: null,
        releasedAt: null,
      });
    });
  }
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && (error.driverError as { code?: string })?.code === UNIQUE_VIOLATION;
}
