import { Injectable } from '@nestjs/common';
import { ProblemException } from '../common/problem';
import type { Channel } from '../common/phone-number';
import { DestinationCache, type DestinationView } from './destination-cache';
import { checkPhoneNumber } from './phone-number-check';

/**
 * The toll-fraud guard: a participant must be a valid number for its country, able to
 * receive SMS in an SMS session, not special-rate unless the account is allowed those, in one of
 * the account's allowed countries (default: the countries of the pool's numbers), and not one of
 * the broker's own proxy numbers (two sessions could feed each other). Checked against memory
 * (DestinationCache): no database round trip on an allowed create. Before refusing, the account and
 * the pool are re-read once, so a refusal always reflects the database (a widening made on another
 * replica a moment ago is honoured). The participant limit is in the reservation.
 */
@Injectable()
export class DestinationPolicy {
  constructor(private readonly cache: DestinationCache) {}

  async assertAllowed(accountId: string, channel: Channel, participants: readonly string[]): Promise<void> {
    const view = await this.cache.view(accountId);
    if (!view) return;
    if (refusal(view, channel, participants) === null) return;
    const fresh = await this.cache.reread(accountId);
    const problem = fresh && refusal(fresh, channel, participants);
    if (problem) throw problem;
  }
}

/** The first participant the view refuses, as the 422 to answer; null when all are allowed. */
function refusal(view: DestinationView, channel: Channel, participants: readonly string[]): ProblemException | null {
  const { account, poolNumbers, poolCountries } = view;
  const allowed = account.allowedCountries ? new Set(account.allowedCountries) : poolCountries;
  for (const [i, number] of participants.entries()) {
    const field = `participants[${i}].number`;
    if (poolNumbers.has(number))
      return refused(field, `${number} is one of this broker's proxy numbers; a participant must be a person`, 'proxy-number-participant');
    const verdict = checkPhoneNumber(number, channel, account.allowSpecialRate);
    if (!verdict.ok) return refused(field, verdict.message, 'destination-not-allowed', verdict.country);
    if (!allowed.has(verdict.country))
      return refused(
        field,
        `${number} is in ${verdict.country}, which this account may not reach (allowed: ${[...allowed].sort().join(', ') || 'none'}); an operator can allow it`,
        'destination-not-allowed',
        verdict.country,
      );
  }
  return null;
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
