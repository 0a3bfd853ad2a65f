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
  /** Active sessions of this account per participant number (only numbers that have some). */
  readonly held: ReadonlyMap<string, number>;
}

interface AccountDestinationsRow {
  allowed_countries: string[] | null;
  allow_special_rate: boolean;
  pool_numbers: string[] | null;
  pool_participants: string[] | null;
  held: Record<string, number> | null;
}

/** The SQL behind the toll-fraud guard and the participant limit (DestinationPolicy). */
@Injectable()
export class DestinationRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Null when the account does not exist. */
  async accountDestinations(accountId: string, participants: readonly string[]): Promise<AccountDestinations | null> {
    const [row] = await this.dataSource.query<AccountDestinationsRow[]>(
      `SELECT a.allowed_countries, a.allow_special_rate,
              CASE WHEN a.allowed_countries IS NULL
                   THEN (SELECT array_agg(DISTINCT pn.number) FROM proxy_numbers pn) END AS pool_numbers,
              (SELECT array_agg(DISTINCT pn.number) FROM proxy_numbers pn WHERE pn.number = ANY($2::text[])) AS pool_participants,
              (SELECT json_object_agg(h.number, h.n) FROM (
                 SELECT sp.number, count(*) AS n FROM session_participants sp JOIN sessions s ON s.id = sp.session_id
                  WHERE sp.active AND sp.number = ANY($2::text[]) AND sp.expires_at > now() AND s.account_id = $1
                  GROUP BY sp.number) h) AS held
         FROM accounts a WHERE a.id = $1`,
      [accountId, participants],
    );
    if (!row) return null;
    return {
      allowedCountries: row.allowed_countries,
      allowSpecialRate: row.allow_special_rate,
      poolNumbers: row.pool_numbers ?? [],
      poolParticipants: row.pool_participants ?? [],
      held: new Map(Object.entries(row.held ?? {}).map(([number, n]) => [number, Number(n)])),
    };
  }
}
