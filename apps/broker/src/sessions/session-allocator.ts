import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import type { Channel } from '../numbers/proxy-number.entity';
import { PoolUsage } from '../providers/pool-usage';
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

const UNIQUE_VIOLATION = '23505';
const DEADLOCK = '40P01';
const MAX_ATTEMPTS = 8;

/**
 * One statement: the first eligible number (enabled, channel-capable, neither participant active on
 * it) in load order, the pending session, and its two participant rows. Being one statement it is
 * one round trip and atomic without an explicit transaction.
 */
export const RESERVE_SQL = `/* session.reserve */
  WITH candidate AS (
    SELECT pn.id, pn.number FROM proxy_numbers pn
     WHERE pn.provider = $1 AND pn.enabled AND $2 = ANY(pn.capabilities)
       AND NOT EXISTS (SELECT 1 FROM session_participants sp
                        WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.expires_at > now() AND sp.number = ANY($3::text[]))
     ORDER BY array_position($4::uuid[], pn.id) NULLS FIRST, pn.number
     LIMIT 1
  ), reserved AS (
    INSERT INTO sessions (account_id, channel, status, provider, proxy_number_id, proxy_number, participants, callback_url, metadata, expires_at, idempotency_key)
    SELECT $5, $2, 'pending', $1, c.id, c.number, $6, $7, $8, now() + make_interval(secs => $9), $10 FROM candidate c
    RETURNING id, proxy_number_id, proxy_number, created_at, expires_at
  ), participants AS (
    INSERT INTO session_participants (session_id, number, proxy_number_id, active, expires_at)
    SELECT r.id, n, r.proxy_number_id, true, r.expires_at FROM reserved r, unnest($3::text[]) AS n
  )
  SELECT id, proxy_number_id, proxy_number, created_at, expires_at FROM reserved`;

/**
 * Reserves a proxy number on one provider for a new session, keeping the pool rule: the least
 * loaded number where neither participant already has an active session. The database enforces
 * the rule (a partial unique index), so replicas racing for the same number cannot both win: the
 * loser's insert fails and it picks again. The reservation is a `pending` session, made `active`
 * once the provider has bound the number, or removed if it could not.
 *
 * Load comes from PoolUsage (read every few seconds, plus this replica's own reservations), so a
 * create does not count every active session. A participant whose old session on a number has
 * passed its expiresAt but not been swept yet is freed when its row gets in the way.
 */
@Injectable()
export class SessionAllocator {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly pool: PoolUsage,
  ) {}

  async reserve(request: ReservationRequest): Promise<Session> {
    // Sorted, so two creates for the same pair take the index entries in the same order.
    const numbers = [...request.participants].sort();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.tryReserve(request, numbers);
      } catch (error) {
        const code = sqlState(error);
        if (attempt >= MAX_ATTEMPTS || (code !== UNIQUE_VIOLATION && code !== DEADLOCK)) throw error;
        if (code === UNIQUE_VIOLATION) await this.freeExpired(request.provider, numbers);
      }
    }
  }

  /** Removes a reservation whose binding failed: nothing half-made is left behind. */
  async release(sessionId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM sessions WHERE id = $1 AND status = 'pending'`, [sessionId]);
  }

  private async tryReserve(request: ReservationRequest, numbers: string[]): Promise<Session> {
    const rows: Array<{ id: string; proxy_number_id: string; proxy_number: string; created_at: Date; expires_at: Date }> =
      await this.dataSource.query(RESERVE_SQL, [
        request.provider,
        request.channel,
        numbers,
        this.pool.loadOrder(),
        request.accountId,
        request.participants,
        request.callbackUrl,
        JSON.stringify(request.metadata),
        request.ttlSeconds,
        request.idempotencyKey,
      ]);
    if (rows.length === 0) throw new PoolExhaustedError(request.provider);
    const [row] = rows;
    this.pool.noteReserved(row.proxy_number_id);
    return Object.assign(new Session(), {
      id: row.id,
      accountId: request.accountId,
      channel: request.channel,
      status: 'pending' as const,
      provider: request.provider,
      proxyNumberId: row.proxy_number_id,
      proxyNumber: row.proxy_number,
      participants: [...request.participants],
      bindingId: null,
      callbackUrl: request.callbackUrl,
      metadata: request.metadata,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      endedAt: null,
      releasedAt: null,
      idempotencyKey: request.idempotencyKey,
    });
  }

  /** A session is inactive from expiresAt on, swept or not: its participants' rows stop counting. */
  private async freeExpired(provider: string, numbers: string[]): Promise<void> {
    await this.dataSource.query(
      `UPDATE session_participants sp SET active = false
        WHERE sp.active AND sp.expires_at <= now() AND sp.number = ANY($2::text[])
          AND sp.proxy_number_id IN (SELECT id FROM proxy_numbers WHERE provider = $1)`,
      [provider, numbers],
    );
  }
}

function sqlState(error: unknown): string | undefined {
  return error instanceof QueryFailedError ? (error.driverError as { code?: string })?.code : undefined;
}
