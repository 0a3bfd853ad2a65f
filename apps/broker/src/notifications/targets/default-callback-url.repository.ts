import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** The account's default callback URL: where its session events go when a session names none. */
@Injectable()
export class DefaultCallbackUrlRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Null when none is set (or there is no such account). */
  async get(accountId: string): Promise<string | null> {
    const [row] = await this.dataSource.query<Array<{ default_callback_url: string | null }>>(
      'SELECT default_callback_url FROM accounts WHERE id = $1',
      [accountId],
    );
    return row?.default_callback_url ?? null;
  }

  /** Null clears it. */
  async set(accountId: string, url: string | null): Promise<void> {
    await this.dataSource.query('UPDATE accounts SET default_callback_url = $2 WHERE id = $1', [accountId, url]);
  }
}
