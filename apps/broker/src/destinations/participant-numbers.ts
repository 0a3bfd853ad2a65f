/**
 * Participant numbers as an account's people write them (issue #30): E.164 always; and, once the
 * account has a default country (`PUT /v1/account/default-country`), a national number of that
 * country too (`08031234567` with NG is +2348031234567), read with libphonenumber's metadata, not a
 * regex. What comes out is E.164, so answers, the pool rule and the destination guard see one form.
 * The default country is read from the destinations memory: no database round trip on a create.
 */
import { Injectable } from '@nestjs/common';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { ValidationProblem } from '../common/problem';
import { E164 } from '../common/phone-number';
import { DestinationCache } from './destination-cache';

type ParticipantReading = { ok: true; number: string } | { ok: false; message: string };

/** One number: E.164 as given, or a national number of `defaultCountry` (null: E.164 only). */
export function readParticipantNumber(written: string, defaultCountry: string | null): ParticipantReading {
  const value = written.trim();
  if (E164.test(value)) return { ok: true, number: value };
  if (!defaultCountry)
    return {
      ok: false,
      message: `${value} is not an E.164 number (like +2348030000001); set the account's default country (PUT /v1/account/default-country) to write national numbers`,
    };
  const parsed = parsePhoneNumberFromString(value, defaultCountry as CountryCode);
  if (!parsed || !parsed.isPossible())
    return { ok: false, message: `${value} is neither an E.164 number nor a ${defaultCountry} number (like 08030000001)` };
  return { ok: true, number: parsed.number };
}

@Injectable()
export class ParticipantNumbers {
  constructor(private readonly cache: DestinationCache) {}

  /** The participants in E.164, in order; a 400 naming each one that cannot be read, or two that are one person. */
  async read(accountId: string, written: readonly string[]): Promise<string[]> {
    const defaultCountry = (await this.cache.view(accountId))?.account.defaultCountry ?? null;
    const readings = written.map((w) => readParticipantNumber(w, defaultCountry));
    const errors = readings.flatMap((r, i) => (r.ok ? [] : [{ field: `participants[${i}].number`, message: r.message }]));
    if (errors.length > 0) throw new ValidationProblem(errors);
    const numbers = readings.map((r) => (r as { number: string }).number);
    if (new Set(numbers).size !== numbers.length)
      throw new ValidationProblem([{ field: 'participants', message: 'participants must be two different numbers' }]);
    return numbers;
  }

  /** One number in E.164, read as a participant's is (a message's `to`); a 400 naming `field` when it cannot be read. */
  async readOne(accountId: string, written: string, field: string): Promise<string> {
    const defaultCountry = (await this.cache.view(accountId))?.account.defaultCountry ?? null;
    const reading = readParticipantNumber(written, defaultCountry);
    if (!reading.ok) throw new ValidationProblem([{ field, message: reading.message }]);
    return reading.number;
  }
}
