/** ITU-T E.164: a plus, a non-zero leading digit, at most 15 digits in all. */
const E164 = /^\+[1-9]\d{1,14}$/;

export const isE164 = (value: unknown): value is string => typeof value === 'string' && E164.test(value);
