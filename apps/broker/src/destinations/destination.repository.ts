import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** Channel of the triggers on proxy_numbers and accounts (migration DestinationNotify): 'pool' or 'account:<id>'. */
export const DESTINATIONS_CHANNEL = 'broker_destinations';

/** What the destination policy checks an account's participants against. */
export interface AccountDestinations {
  /** ISO country codes; null: the countries of the pool's numbers. */
  readonly allowedCountries: readonly string[] | null;
  readonly allowSpecialRate: boolean;
  /** The country a participant number without `+` is read in; null: E.164 only. */
  readonly defaultCountry: string | null;
}

interface AccountDestinationsRow {
  id: string;
  allowed_countries: string[] | null;
  allow_special_rate: boolean;
  default_country: string | null;
}

/** The SQL behind the toll-fraud guard's memory (DestinationCache); none of it runs on a create that is allowed. */
@Injectable()
export class DestinationRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Every pool number (shared and dedicated): the default allowed countries are theirs, and none may be a participant. */
  async poolNumbers(): Promise<string[]> {
    const rows = await this.dataSource.query<Array<{ number: string }>>('SELECT DISTINCT number FROM proxy_numbers');
    return rows.map((r) => r.number);
  }

  async allAccounts(): Promise<Map<string, AccountDestinations>> {
    const rows = await this.dataSource.query<AccountDestinationsRow[]>(
      'SELECT id, allowed_countries, allow_special_rate, default_country FROM accounts',
    );
    return new Map(rows.map((r) => [r.id, toDestinations(r)]));
  }

  /** Null when the account does not exist. */
  async account(accountId: string): Promise<AccountDestinations | null> {
    const [row] = await this.dataSource.query<AccountDestinationsRow[]>(
      'SELECT id, allowed_countries, allow_special_rate, default_country FROM accounts WHERE id = $1',
      [accountId],
    );
    return row ? toDestinations(row) : null;
  }
}

function toDestinations(row: AccountDestinationsRow): AccountDestinations {
  return { allowedCountries: row.allowed_countries, allowSpecialRate: row.allow_special_rate, defaultCountry: row.default_country };
}
