/**
 * What a number is, as libphonenumber-js (Google's metadata) says: valid for its country or not,
 * and of which type. The toll-fraud guard decides on these facts, never on a regex.
 */
import { parsePhoneNumberFromString, type NumberType } from 'libphonenumber-js/max';
import type { Channel } from '../common/phone-number';

/** Numbers whose caller pays more than a call or text normally costs (revenue-share fraud targets). */
const SPECIAL_RATE_TYPES: ReadonlySet<NumberType> = new Set<NumberType>([
  'PREMIUM_RATE',
  'SHARED_COST',
  'PERSONAL_NUMBER',
  'UAN',
  'PAGER',
  'VOICEMAIL',
]);

/** Types that can receive a text message. */
const SMS_TYPES: ReadonlySet<NumberType> = new Set<NumberType>(['MOBILE', 'FIXED_LINE_OR_MOBILE']);

type NumberVerdict =
  | { ok: true; country: string; type: NumberType | undefined }
  | { ok: false; country: string | undefined; reason: 'invalid' | 'special-rate' | 'not-sms'; message: string };

/** Whether `number` (E.164) is a real number that `channel` may use; never throws. */
export function checkPhoneNumber(number: string, channel: Channel | 'any', allowSpecialRate = false): NumberVerdict {
  const parsed = parsePhoneNumberFromString(number);
  const country = parsed?.country;
  // A number with a type is valid (isValid() is "has a type" once the metadata has types, as the max set
  // does, and the national pattern otherwise, which getType() checks first): the type is worked out once.
  const type = parsed?.getType();
  if (!parsed || parsed.number !== number || (type === undefined && !parsed.isValid()) || !country) {
    const where = country ? `for ${country}` : 'in any country';
    return { ok: false, country, reason: 'invalid', message: `${number} is not a valid phone number ${where}` };
  }
  if (type && SPECIAL_RATE_TYPES.has(type) && !allowSpecialRate)
    return {
      ok: false,
      country,
      reason: 'special-rate',
      message: `${number} is a ${type.toLowerCase().replace(/_/g, '-')} number in ${country}; special-rate numbers are refused unless an operator allows them`,
    };
  if (channel === 'sms' && !(type && SMS_TYPES.has(type)))
    return { ok: false, country, reason: 'not-sms', message: `${number} (${country}) cannot receive SMS: it is not a mobile number` };
  return { ok: true, country, type };
}

/** The country of a valid number, or undefined. */
export function countryOf(number: string): string | undefined {
  const parsed = parsePhoneNumberFromString(number);
  return parsed?.isValid() ? parsed.country : undefined;
}
