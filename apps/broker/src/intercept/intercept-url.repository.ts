import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** The account's intercept URL: asked before each relay and bridge of its sessions that name none of their own. */
@Injectable()
export class InterceptUrlRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Null when none is set. */
  async get(accountId: string): Promise<string | null> {
    const [row] = await this.dataSource.query<Array<{ intercept_url: string | null }>>('SELECT intercept_url FROM accounts WHERE id = $1', [
      accountId,
    ]);
    return row?.intercept_url ?? null;
  }

  /** Null clears it. */
  async set(accountId: string, url: string | null): Promise<void> {
    await this.dataSource.query('UPDATE accounts SET intercept_url = $2 WHERE id = $1', [accountId, url]);
  }
}
