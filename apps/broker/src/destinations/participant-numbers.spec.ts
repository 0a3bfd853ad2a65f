import { ValidationProblem } from '../common/problem';
import type { DestinationCache } from './destination-cache';
import { ParticipantNumbers, readParticipantNumber } from './participant-numbers';

describe('readParticipantNumber', () => {
  it.each([
    ['08031234567', 'NG', '+2348031234567'],
    ['0803 123 4567', 'NG', '+2348031234567'],
    ['(0803) 123-4567', 'NG', '+2348031234567'],
    ['8031234567', 'NG', '+2348031234567'],
    ['+2348031234567', 'NG', '+2348031234567'],
    ['+2348031234567', null, '+2348031234567'],
    ['+447700900123', 'NG', '+447700900123'],
    ['07700 900123', 'GB', '+447700900123'],
  ])('%s with default country %s is %s', (written, country, e164) => {
    expect(readParticipantNumber(written, country)).toEqual({ ok: true, number: e164 });
  });

  it('without a default country the E.164 rule stands: a national number is refused, saying how to allow it', () => {
    const reading = readParticipantNumber('08031234567', null);
    expect(reading).toMatchObject({ ok: false, message: expect.stringContaining('PUT /v1/account/default-country') });
  });

  it('a number that is not one of the country is refused', () => {
    expect(readParticipantNumber('0803', 'NG')).toMatchObject({ ok: false, message: expect.stringContaining('NG number') });
    expect(readParticipantNumber('+234 803 123 4567', null)).toMatchObject({ ok: false });
  });
});

describe('ParticipantNumbers', () => {
  const withCountry = (country: string | null) =>
    new ParticipantNumbers({
      view: () => Promise.resolve({ account: { allowedCountries: null, allowSpecialRate: false, defaultCountry: country } }),
    } as unknown as DestinationCache);

  it('reads both participants with the account default country', async () => {
    expect(await withCountry('NG').read('a', ['08031234567', '+2348039876543'])).toEqual(['+2348031234567', '+2348039876543']);
  });

  it('two ways of writing one number are one person: refused', async () => {
    const error = await withCountry('NG')
      .read('a', ['08031234567', '+2348031234567'])
      .catch((e: unknown) => e);
    expect(error instanceof ValidationProblem && error.errors).toEqual([
      { field: 'participants', message: 'participants must be two different numbers' },
    ]);
  });

  it('names each participant it cannot read', async () => {
    const error = await withCountry(null)
      .read('a', ['08031234567', '+2348039876543'])
      .catch((e: unknown) => e);
    expect(error instanceof ValidationProblem && error.errors.map((e) => e.field)).toEqual(['participants[0].number']);
  });
});
