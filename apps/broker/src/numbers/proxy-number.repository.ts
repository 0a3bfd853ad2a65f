/**
 * The SQL of the proxy-number pool: what each provider holds, to whom a number is dedicated, and
 * how loaded each number is. Typed rows out; ProxyNumbersService decides what is allowed.
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Channel } from './proxy-number.entity';

export interface ProxyNumberRow {
  id: string;
  provider: string;
  number: string;
  capabilities: Channel[];
  enabled: boolean;
  /** The account the number is dedicated to; null: the shared pool. */
  accountId: string | null;
  activeSessions: number;
  createdAt: Date;
}

interface RawNumber {
  id: string;
  provider: string;
  number: string;
  capabilities: Channel[];
  enabled: boolean;
  account_id: string | null;
  active_sessions: number;
  created_at: Date;
}

const SELECT_WITH_LOAD = `
  SELECT pn.id, pn.provider, pn.number, pn.capabilities, pn.enabled, pn.account_id, pn.created_at,
    (SELECT count(*)::int FROM sessions s WHERE s.proxy_number_id = pn.id AND s.status = 'active' AND s.inactive_at > now()) AS active_sessions
  FROM proxy_numbers pn`;

@Injectable()
export class ProxyNumberRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Adds the numbers a provider does not hold yet; answers how many were new. */
  async addMissing(provider: string, numbers: string[]): Promise<number> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `INSERT INTO proxy_numbers (provider, number) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING RETURNING id`,
      [provider, numbers],
    );
    return rows.length;
  }

  /** Adds a number, or re-enables it with these capabilities; answers its id. */
  async upsert(provider: string, number: string, capabilities: Channel[]): Promise<string> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `INSERT INTO proxy_numbers (provider, number, capabilities, enabled) VALUES ($1, $2, $3, true)
       ON CONFLICT (provider, number) DO UPDATE SET enabled = true, capabilities = EXCLUDED.capabilities
       RETURNING id`,
      [provider, number, capabilities],
    );
    return rows[0].id;
  }

  async list(provider?: string): Promise<ProxyNumberRow[]> {
    const rows: RawNumber[] = await this.dataSource.query(
      `${SELECT_WITH_LOAD} ${provider ? 'WHERE pn.provider = $1' : ''} ORDER BY pn.provider, pn.number`,
      provider ? [provider] : [],
    );
    return rows.map(toRow);
  }

  async find(id: string): Promise<ProxyNumberRow | undefined> {
    const rows: RawNumber[] = await this.dataSource.query(`${SELECT_WITH_LOAD} WHERE pn.id = $1`, [id]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  async disable(id: string): Promise<void> {
    await this.dataSource.query('UPDATE proxy_numbers SET enabled = false WHERE id = $1', [id]);
  }

  /**
   * Dedicates the number to the account (null: back to the shared pool). False when the account
   * does not exist; a missing number changes nothing (the caller reads it back).
   */
  async setAccount(id: string, accountId: string | null): Promise<boolean> {
    if (accountId === null) {
      await this.dataSource.query('UPDATE proxy_numbers SET account_id = NULL WHERE id = $1', [id]);
      return true;
    }
    const rows: Array<{ found: boolean }> = await this.dataSource.query(
      `WITH account AS (SELECT id FROM accounts WHERE id = $2),
            dedicated AS (UPDATE proxy_numbers pn SET account_id = a.id FROM account a WHERE pn.id = $1 RETURNING pn.id)
       SELECT EXISTS (SELECT 1 FROM account) AS found`,
      [id, accountId],
    );
    return rows[0].found;
  }
}

function toRow(row: RawNumber): ProxyNumberRow {
  return {
    id: row.id,
    provider: row.provider,
    number: row.number,
    capabilities: row.capabilities,
    enabled: row.enabled,
    accountId: row.account_id,
    activeSessions: row.active_sessions,
    createdAt: row.created_at,
  };
}
