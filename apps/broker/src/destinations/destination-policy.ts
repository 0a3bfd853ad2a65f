import { Injectable } from '@nestjs/common';
import { ProblemException } from '../common/problem';
import type { Channel } from '../numbers/proxy-number.entity';
import { DestinationRepository } from './destination.repository';
import { checkPhoneNumber, countryOf } from './phone-number-check';

/**
 * The toll-fraud guard: a participant must be a valid number for its country, able to
 * receive SMS in an SMS session, not special-rate unless the account is allowed those, in one of
 * the account's allowed countries (default: the countries of the pool's numbers), and not one of
 * the broker's own proxy numbers (two sessions could feed each other); and fair use of the shared
 * pool: at most SESSION_PARTICIPANT_LIMIT active sessions of one account per participant number
 * (checked before the reservation, so concurrent creates may pass it by a few). One query per create.
 */
@Injectable()
export class DestinationPolicy {
  /** Country per pool number: the pool is operator-made and small, and a number's country never changes. */
  private readonly countries = new Map<string, string | undefined>();

  constructor(private readonly repository: DestinationRepository) {}

  async assertAllowed(accountId: string, channel: Channel, participants: readonly string[]): Promise<void> {
    const account = await this.repository.accountDestinations(accountId, participants);
    if (!account) return;
    const allowed = new Set(account.allowedCountries ?? account.poolNumbers.map((n) => this.countryOf(n)).filter(Boolean));
    participants.forEach((number, i) => {
      const field = `participants[${i}].number`;
      if (account.poolParticipants.includes(number))
        throw refused(field, `${number} is one of this broker's proxy numbers; a participant must be a person`, 'proxy-number-participant');
      const verdict = checkPhoneNumber(number, channel, account.allowSpecialRate);
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
  return new ProblemException({
    status: 422,
    slug,
    title: 'Destination not allowed',
    detail: `${field}: ${message}`,
    extensions: {
      errors: [{ field, message }],
      ...(country ? { country } : {}),
    },
  });
}
