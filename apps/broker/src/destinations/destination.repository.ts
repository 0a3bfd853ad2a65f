import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** What the destination policy checks a create's participants against, read in one query. */
export interface AccountDestinations {
  /** ISO country codes; null: the countries of the pool's numbers. */
  readonly allowedCountries: string[] | null;
  readonly allowSpecialRate: boolean;
  /** Every pool number, read only when allowedCountries is null (the default is their countries). */
  readonly poolNumbers: string[];
  /** The participants that are proxy numbers themselves. */
  readonly poolParticipants: string[];
}

interface AccountDestinationsRow {
  allowed_countries: string[] | null;
  allow_special_rate: boolean;
  pool_numbers: string[] | null;
  pool_participants: string[] | null;
}

/** The SQL behind the toll-fraud guard (DestinationPolicy); the participant limit is in the reservation. */
@Injectable()
export class DestinationRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Null when the account does not exist. */
  async accountDestinations(accountId: string, participants: readonly string[]): Promise<AccountDestinations | null> {
    const [row] = await this.dataSource.query<AccountDestinationsRow[]>(
      `SELECT a.allowed_countries, a.allow_special_rate,
              CASE WHEN a.allowed_countries IS NULL
                   THEN (SELECT array_agg(DISTINCT pn.number) FROM proxy_numbers pn) END AS pool_numbers,
              (SELECT array_agg(DISTINCT pn.number) FROM proxy_numbers pn WHERE pn.number = ANY($2::text[])) AS pool_participants
         FROM accounts a WHERE a.id = $1`,
      [accountId, participants],
    );
    if (!row) return null;
    return {
      allowedCountries: row.allowed_countries,
      allowSpecialRate: row.allow_special_rate,
      poolNumbers: row.pool_numbers ?? [],
      poolParticipants: row.pool_participants ?? [],
    };
  }
}
