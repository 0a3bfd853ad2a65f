import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { RescueAccount } from './rescue-rules';

/** Notified (by a trigger on accounts, migration SessionRescue) whenever an account's rescue setting changes; payload: its id. */
export const RESCUE_SETTINGS_CHANNEL = 'broker_rescue_settings';

/** An account's rescue setting; `afterSeconds` null: off (its sessions stay on their provider). */
export interface RescueSetting {
  readonly afterSeconds: number | null;
  readonly notice: string | null;
}

/** The accounts' rescue settings (`PUT /v1/account/rescue`), and the accounts that opted in, for the breaker leader. */
@Injectable()
export class RescueSettingsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async get(accountId: string): Promise<RescueSetting> {
    const [row] = await this.dataSource.query<Array<{ rescue_after_seconds: number | null; rescue_notice: string | null }>>(
      'SELECT rescue_after_seconds, rescue_notice FROM accounts WHERE id = $1',
      [accountId],
    );
    return { afterSeconds: row?.rescue_after_seconds ?? null, notice: row?.rescue_notice ?? null };
  }

  /** Both at once; `afterSeconds` null turns rescue off (and drops the notice with it). */
  async set(accountId: string, setting: RescueSetting): Promise<RescueSetting> {
    const notice = setting.afterSeconds === null ? null : setting.notice;
    await this.dataSource.query('UPDATE accounts SET rescue_after_seconds = $2, rescue_notice = $3 WHERE id = $1', [
      accountId,
      setting.afterSeconds,
      notice,
    ]);
    return { afterSeconds: setting.afterSeconds, notice };
  }

  /** Every account with rescue on. Few rows: an opt-in per account, read by the leader while a provider is OPEN. */
  async optedIn(): Promise<RescueAccount[]> {
    const rows = await this.dataSource.query<Array<{ id: string; rescue_after_seconds: number }>>(
      'SELECT id, rescue_after_seconds FROM accounts WHERE rescue_after_seconds IS NOT NULL ORDER BY id',
    );
    return rows.map((r) => ({ id: r.id, afterSeconds: r.rescue_after_seconds }));
  }
}
