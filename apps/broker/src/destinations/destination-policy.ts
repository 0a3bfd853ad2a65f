import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemException } from '../common/problem';
import type { Channel } from '../numbers/proxy-number.entity';
import { checkPhoneNumber, countryOf } from './phone-number-check';

interface AccountDestinations {
  allowed_countries: string[] | null;
  allow_special_rate: boolean;
  /** Only read when allowed_countries is null: the default is the countries of these. */
  pool_numbers: string[] | null;
  /** Participants that are proxy numbers themselves. */
  pool_participants: string[] | null;
}

/**
 * The toll-fraud guard: a participant must be a valid number for its country, able to
 * receive SMS in an SMS session, not special-rate unless the account is allowed those, in one of
 * the account's allowed countries (default: the countries of the pool's numbers), and not one of
 * the broker's own proxy numbers (two sessions could feed each other). One query per create. (Fair
 * use of the shared pool is checked inside the reservation: SessionAllocator.)
 */
@Injectable()
export class DestinationPolicy {
  /** Country per pool number: the pool is operator-made and small, and a number's country never changes. */
  private readonly countries = new Map<string, string | undefined>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async assertAllowed(accountId: string, channel: Channel, participants: readonly string[]): Promise<void> {
    const rows: AccountDestinations[] = await this.dataSource.query(
      `SELECT a.allowed_countries, a.allow_special_rate,
              CASE WHEN a.allowed_countries IS NULL
                   THEN (SELECT array_agg(DISTINCT pn.number) FROM proxy_numbers pn) END AS pool_numbers,
              (SELECT array_agg(DISTINCT pn.number) FROM proxy_numbers pn WHERE pn.number = ANY($2::text[])) AS pool_participants
         FROM accounts a WHERE a.id = $1`,
      [accountId, participants],
    );
    const account = rows[0];
    if (!account) return;
    const allowed = new Set(account.allowed_countries ?? (account.pool_numbers ?? []).map((n) => this.countryOf(n)).filter(Boolean));
    participants.forEach((number, i) => {
      const field = `participants[${i}].number`;
      if (account.pool_participants?.includes(number))
        throw refused(field, `${number} is one of this broker's proxy numbers; a participant must be a person`, 'proxy-number-participant');
      const verdict = checkPhoneNumber(number, channel, account.allow_special_rate);
      if (!verdict.ok) throw refused(field, verdict.message, 'destination-not-allowed', verdict.country);
      if (!allowed.has(verdict.country))
        throw refused(
          field,
          `${number} is in ${verdict.country}, which this account may not reach (allowed: ${[...allowed].sort().join(', ') || 'none'}); an operator can allow it`,
          'destination-not-allowed',
          verdict.country,
        );
    });
  }

  private countryOf(number: string): string | undefined {
    if (!this.countries.has(number)) this.countries.set(number, countryOf(number));
    return this.countries.get(number);
  }
}

function refused(field: string, message: string, slug: string, country?: string): ProblemException {
  return new ProblemException(422, 'Destination not allowed', `${field}: ${message}`, slug, {
    errors: [{ field, message }],
    ...(country ? { country } : {}),
  });
}
