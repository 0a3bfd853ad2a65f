import fc from 'fast-check';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { checkPhoneNumber, countryOf } from './phone-number-check';

describe('checkPhoneNumber', () => {
  it.each(['+2348030000001', '+2348030000002', '+2348099000001', '+2349010000001', '+2349020000001'])(
    'accepts the Nigerian mobile %s used by the seeded pool, the examples and the tests, for SMS',
    (number) => {
      expect(checkPhoneNumber(number, 'sms')).toEqual({ ok: true, country: 'NG', type: 'MOBILE' });
    },
  );

  it('refuses a number that is not valid for its country, naming the country', () => {
    expect(checkPhoneNumber('+23480300000', 'voice')).toMatchObject({ ok: false, reason: 'invalid', country: 'NG' });
    expect(checkPhoneNumber('+2340000000001', 'voice')).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('refuses premium-rate numbers unless allowed', () => {
    expect(checkPhoneNumber('+449090000000', 'voice')).toMatchObject({ ok: false, reason: 'special-rate', country: 'GB' });
    expect(checkPhoneNumber('+449090000000', 'voice', true)).toMatchObject({ ok: true, country: 'GB', type: 'PREMIUM_RATE' });
  });

  it('refuses SMS to a number that cannot receive it, and accepts it for voice', () => {
    expect(checkPhoneNumber('+2348000000000', 'sms')).toMatchObject({ ok: false, reason: 'not-sms', country: 'NG' });
    expect(checkPhoneNumber('+2348000000000', 'voice')).toMatchObject({ ok: true, type: 'TOLL_FREE' });
  });

  it('tells a valid number country', () => {
    expect(countryOf('+447400123456')).toBe('GB');
    expect(countryOf('+0')).toBeUndefined();
  });

  it('accepts exactly the numbers libphonenumber-js calls valid, with their country and type (the type is worked out once)', () => {
    const codes = ['1', '7', '20', '33', '44', '49', '86', '91', '234', '254', '358', '880', '979', '800'];
    fc.assert(
      fc.property(fc.constantFrom(...codes), fc.stringMatching(/^[0-9]{4,12}$/), (code, digits) => {
        const number = `+${code}${digits}`;
        const parsed = parsePhoneNumberFromString(number);
        const valid = Boolean(parsed && parsed.number === number && parsed.isValid() && parsed.country);
        const verdict = checkPhoneNumber(number, 'voice', true);
        expect(verdict.ok).toBe(valid);
        expect(verdict.country).toBe(parsed?.country);
        if (verdict.ok) expect(verdict.type).toBe(parsed!.getType());
      }),
      { seed: 19, numRuns: 3000 },
    );
  });
});
