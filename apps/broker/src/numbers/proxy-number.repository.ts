/**
 * The SQL of the proxy-number pool: what each provider holds, to whom a number is dedicated, and
 * how loaded each number is (the pool usage the health page and the allocator read). Typed rows out;
 * ProxyNumbersService decides what is allowed.
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

/** A proxy number of a provider's pool, and the account it is dedicated to (null: the shared pool). */
export interface PoolNumber {
  readonly accountId: string | null;
}

export interface PoolUsageRows {
  /** `voice`, `sms`: enabled numbers carrying each channel. */
  numbers: Array<{ provider: string; total: number; enabled: number; voice: number; sms: number }>;
  perNumber: Array<{ provider: string; proxy_number_id: string; active: number }>;
  /** Active sessions per provider and channels (`voice`, `sms`, `voice+sms`). */
  perChannels: Array<{ provider: string; channels: string; active: number }>;
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

  /** The proxy number `number` of `provider`'s pool; null when the pool does not hold it. */
  async poolNumber(provider: string, number: string): Promise<PoolNumber | null> {
    const [row] = await this.dataSource.query<Array<{ account_id: string | null }>>(
      'SELECT account_id FROM proxy_numbers WHERE provider = $1 AND number = $2',
      [provider, number],
    );
    return row ? { accountId: row.account_id } : null;
  }

  /**
   * The pool and its load. The load is counted with the sessions (migration PoolUsageCounts): the totals per number
   * and channels plus the changes not folded into them yet, so the read costs the pool's size and the changes since
   * the last fold, however many sessions are active. Before reading, one replica at a time folds the changes in
   * (`foldLock`: the advisory lock of the fold, JOB_LOCKS.poolUsageFold).
   */
  async poolUsage(foldLock: number): Promise<PoolUsageRows> {
    await this.foldPoolLoad(foldLock);
    const numbers: PoolUsageRows['numbers'] = await this.dataSource.query(
      `/* pool.numbers */ SELECT provider, count(*)::int AS total, (count(*) FILTER (WHERE enabled))::int AS enabled,
              (count(*) FILTER (WHERE enabled AND 'voice' = ANY(capabilities)))::int AS voice,
              (count(*) FILTER (WHERE enabled AND 'sms' = ANY(capabilities)))::int AS sms
         FROM proxy_numbers GROUP BY provider`,
    );
    const loads: Array<{ provider: string; proxy_number_id: string; channels: string; active: number }> = await this.dataSource.query(
      `/* pool.load */ SELECT pn.provider, l.proxy_number_id, l.channels, sum(l.active)::int AS active
         FROM (SELECT proxy_number_id, channels, active FROM proxy_number_loads
               UNION ALL SELECT proxy_number_id, channels, delta FROM proxy_number_load_changes) l
         JOIN proxy_numbers pn ON pn.id = l.proxy_number_id
        GROUP BY pn.provider, l.proxy_number_id, l.channels HAVING sum(l.active) > 0`,
    );
    const perNumber = new Map<string, PoolUsageRows['perNumber'][number]>();
    const perChannels = new Map<string, PoolUsageRows['perChannels'][number]>();
    for (const row of loads) {
      const number = perNumber.get(row.proxy_number_id) ?? { provider: row.provider, proxy_number_id: row.proxy_number_id, active: 0 };
      number.active += row.active;
      perNumber.set(row.proxy_number_id, number);
      const key = `${row.provider}\u0000${row.channels}`;
      const channels = perChannels.get(key) ?? { provider: row.provider, channels: row.channels, active: 0 };
      channels.active += row.active;
      perChannels.set(key, channels);
    }
    return { numbers, perNumber: [...perNumber.values()], perChannels: [...perChannels.values()] };
  }

  /**
   * Moves the load changes written so far into the totals: one statement (its own transaction, one round trip), which
   * moves nothing while another replica's fold holds the lock. Without the lock two folds would still not count a change
   * twice (the second's DELETE skips the rows the first deleted); the lock spares them waiting on each other.
   */
  async foldPoolLoad(foldLock: number): Promise<void> {
    await this.dataSource.query(
      `/* pool.fold */ WITH lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($1) AS held),
       moved AS (
         DELETE FROM proxy_number_load_changes WHERE (SELECT held FROM lock) RETURNING proxy_number_id, channels, delta
       )
       INSERT INTO proxy_number_loads (proxy_number_id, channels, active)
       SELECT proxy_number_id, channels, sum(delta)::int FROM moved GROUP BY proxy_number_id, channels ORDER BY proxy_number_id, channels
       ON CONFLICT (proxy_number_id, channels) DO UPDATE SET active = proxy_number_loads.active + EXCLUDED.active`,
      [foldLock],
    );
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
