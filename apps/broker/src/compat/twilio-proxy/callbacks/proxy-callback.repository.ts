/**
 * What the Twilio-format callbacks read: for a broker session, the Proxy Session it carries, its Service's
 * URLs and the participants' sids; for a proxy number, the Service whose pool holds it. Reads run on the
 * caller's runner (the transaction of the event a callback follows), or on the pool.
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Queryable } from '../../../notifications';
import type { ProxyParticipant } from '../sessions/proxy-participant.entity';
import type { ProxySession } from '../sessions/proxy-session.entity';

/** A Proxy Session with its Service's callback URLs and every participant it had. */
export interface CallbackContext {
  readonly session: Pick<ProxySession, 'id' | 'serviceId' | 'accountId'>;
  readonly callbackUrl: string | null;
  readonly interceptCallbackUrl: string | null;
  readonly outOfSessionCallbackUrl: string | null;
  /** The intercept URL its broker session was given (the Service's when it was made). */
  readonly carrierInterceptUrl: string | null;
  readonly participants: ProxyParticipant[];
}

/** A Service whose pool holds a number, and where its out-of-session callbacks go. */
interface NumberService {
  readonly serviceId: string;
  readonly accountId: string;
  readonly outOfSessionCallbackUrl: string | null;
}

interface ContextRow {
  id: string;
  service_id: string;
  account_id: string;
  callback_url: string | null;
  intercept_callback_url: string | null;
  out_of_session_callback_url: string | null;
  carrier_intercept_url: string | null;
}

interface ParticipantRow {
  id: string;
  session_id: string;
  identifier: string;
  friendly_name: string | null;
  requested_proxy_number_id: string | null;
  slot: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

@Injectable()
export class ProxyCallbackRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Null when the broker session carries no Proxy Session (it is the broker API's own). */
  async contextOf(sessionId: string, runner: Queryable = this.dataSource): Promise<CallbackContext | null> {
    const [row] = (await runner.query(
      `/* twilio-proxy.callback_context */
       SELECT ts.id, ts.service_id, ts.account_id, sv.callback_url, sv.intercept_callback_url, sv.out_of_session_callback_url,
              s.intercept_url AS carrier_intercept_url
         FROM twilio_proxy_sessions ts
         JOIN twilio_proxy_services sv ON sv.id = ts.service_id
         LEFT JOIN sessions s ON s.id = ts.id
        WHERE ts.id = $1`,
      [sessionId],
    )) as ContextRow[];
    if (!row) return null;
    const participants = (await runner.query(
      `SELECT id, session_id, identifier, friendly_name, requested_proxy_number_id, slot, created_at, updated_at, deleted_at
         FROM twilio_proxy_participants WHERE session_id = $1 ORDER BY created_at, id`,
      [sessionId],
    )) as ParticipantRow[];
    return {
      session: { id: row.id, serviceId: row.service_id, accountId: row.account_id },
      callbackUrl: row.callback_url,
      interceptCallbackUrl: row.intercept_callback_url,
      outOfSessionCallbackUrl: row.out_of_session_callback_url,
      carrierInterceptUrl: row.carrier_intercept_url,
      participants: participants.map((p) => ({
        id: p.id,
        sessionId: p.session_id,
        identifier: p.identifier,
        friendlyName: p.friendly_name,
        requestedProxyNumberId: p.requested_proxy_number_id,
        slot: p.slot,
        createdAt: p.created_at,
        updatedAt: p.updated_at,
        deletedAt: p.deleted_at,
      })),
    };
  }

  /** The Service whose pool holds `number` on `provider`, if any. */
  async serviceOfNumber(runner: Queryable, provider: string, number: string): Promise<NumberService | null> {
    const [row] = (await runner.query(
      `SELECT sv.id, sv.account_id, sv.out_of_session_callback_url
         FROM twilio_proxy_phone_numbers spn
         JOIN proxy_numbers pn ON pn.id = spn.proxy_number_id
         JOIN twilio_proxy_services sv ON sv.id = spn.service_id
        WHERE pn.provider = $1 AND pn.number = $2`,
      [provider, number],
    )) as Array<{ id: string; account_id: string; out_of_session_callback_url: string | null }>;
    return row ? { serviceId: row.id, accountId: row.account_id, outOfSessionCallbackUrl: row.out_of_session_callback_url } : null;
  }
}
