/**
 * The SQL of a Service's phone numbers: links from a Service to pool numbers dedicated to its account, read
 * with the number itself and how many live sessions it carries now (`in_use`).
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PageCursor } from '../../../common/pagination/page-cursor';
import type { Channel } from '../../../numbers/proxy-number.entity';
import { violatedIndex } from '../unique-violation';

export interface ServiceNumberView {
  readonly proxyNumberId: string;
  readonly serviceId: string;
  readonly accountId: string;
  readonly provider: string;
  readonly number: string;
  readonly capabilities: Channel[];
  readonly isReserved: boolean;
  readonly inUse: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Why a pool number cannot join a Service. */
export type AddRefusal = 'unknown' | 'ambiguous' | 'not-dedicated' | 'in-a-service';

const VIEW = `SELECT spn.proxy_number_id, spn.service_id, pn.account_id, pn.provider, pn.number, pn.capabilities, spn.is_reserved,
         spn.created_at, spn.updated_at,
         (SELECT count(DISTINCT sp.session_id)::int FROM session_participants sp
           WHERE sp.proxy_number_id = pn.id AND sp.active AND sp.expires_at > $2) AS in_use
    FROM twilio_proxy_phone_numbers spn JOIN proxy_numbers pn ON pn.id = spn.proxy_number_id`;

interface ViewRow {
  proxy_number_id: string;
  service_id: string;
  account_id: string;
  provider: string;
  number: string;
  capabilities: Channel[];
  is_reserved: boolean;
  created_at: Date;
  updated_at: Date;
  in_use: number;
}

@Injectable()
export class ProxyServiceNumberRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Puts the pool number (by id, or by its E.164 number) in the Service: it must be dedicated to the
   * Service's account and in no Service yet.
   */
  async add(
    serviceId: string,
    accountId: string,
    number: { id: string } | { e164: string },
    isReserved: boolean,
    at: Date,
  ): Promise<{ added: string } | { refused: AddRefusal }> {
    const found = await this.dataSource.query<Array<{ id: string; account_id: string | null }>>(
      'id' in number
        ? 'SELECT id, account_id FROM proxy_numbers WHERE id = $1'
        : 'SELECT id, account_id FROM proxy_numbers WHERE number = $1',
      ['id' in number ? number.id : number.e164],
    );
    if (found.length === 0) return { refused: 'unknown' };
    // The same number held on two providers: only its sid says which.
    if (found.length > 1) return { refused: 'ambiguous' };
    if (found[0].account_id !== accountId) return { refused: 'not-dedicated' };
    try {
      await this.dataSource.query(
        `INSERT INTO twilio_proxy_phone_numbers (proxy_number_id, service_id, is_reserved, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`,
        [found[0].id, serviceId, isReserved, at],
      );
    } catch (error) {
      if (violatedIndex(error) !== undefined) return { refused: 'in-a-service' };
      throw error;
    }
    return { added: found[0].id };
  }

  /** The Service's number by its pool id or its E.164 number, as of `now`. */
  async find(serviceId: string, number: { id: string } | { e164: string }, now: Date): Promise<ServiceNumberView | null> {
    const [row] = await this.dataSource.query<ViewRow[]>(
      `${VIEW} WHERE spn.service_id = $1 AND ${'id' in number ? 'pn.id = $3::uuid' : 'pn.number = $3'}`,
      [serviceId, now, 'id' in number ? number.id : number.e164],
    );
    return row ? view(row) : null;
  }

  async page(serviceId: string, now: Date, limit: number, after?: PageCursor): Promise<ServiceNumberView[]> {
    const rows = await this.dataSource.query<ViewRow[]>(
      `${VIEW} WHERE spn.service_id = $1 AND ($4::timestamptz IS NULL OR (spn.created_at, spn.proxy_number_id) < ($4, $5::uuid))
        ORDER BY spn.created_at DESC, spn.proxy_number_id DESC LIMIT $3`,
      [serviceId, now, limit, after?.at ?? null, after?.id ?? null],
    );
    return rows.map(view);
  }

  async setReserved(serviceId: string, proxyNumberId: string, isReserved: boolean, at: Date): Promise<void> {
    await this.dataSource.query(
      'UPDATE twilio_proxy_phone_numbers SET is_reserved = $3, updated_at = $4 WHERE service_id = $1 AND proxy_number_id = $2',
      [serviceId, proxyNumberId, isReserved, at],
    );
  }

  /** Takes the number out of the Service; sessions it carries keep it until they end. */
  async remove(serviceId: string, proxyNumberId: string): Promise<void> {
    await this.dataSource.query('DELETE FROM twilio_proxy_phone_numbers WHERE service_id = $1 AND proxy_number_id = $2', [
      serviceId,
      proxyNumberId,
    ]);
  }

  /** The Service that holds this pool number, if any: where its out-of-session callbacks go. */
  async serviceOf(provider: string, number: string): Promise<string | null> {
    const [row] = await this.dataSource.query<Array<{ service_id: string }>>(
      `SELECT spn.service_id FROM twilio_proxy_phone_numbers spn JOIN proxy_numbers pn ON pn.id = spn.proxy_number_id
        WHERE pn.provider = $1 AND pn.number = $2`,
      [provider, number],
    );
    return row?.service_id ?? null;
  }
}

function view(row: ViewRow): ServiceNumberView {
  return {
    proxyNumberId: row.proxy_number_id,
    serviceId: row.service_id,
    accountId: row.account_id,
    provider: row.provider,
    number: row.number,
    capabilities: row.capabilities,
    isReserved: row.is_reserved,
    inUse: row.in_use,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
