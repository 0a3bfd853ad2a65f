import { twilioSid, uuidOfTwilioSid } from './twilio-sid';

describe('Twilio-style sids', () => {
  const id = '0f8fad5b-d9cb-469f-a165-70867728950e';

  it('is the prefix and the UUID in 32 lower-case hex digits, and reads back', () => {
    expect(twilioSid('AC', id)).toBe('AC0f8fad5bd9cb469fa16570867728950e');
    expect(twilioSid('KC', id.toUpperCase())).toMatch(/^KC[0-9a-f]{32}$/);
    expect(uuidOfTwilioSid('AC', twilioSid('AC', id))).toBe(id);
    // Twilio's own sids are written either case.
    expect(uuidOfTwilioSid('KS', 'KS0F8FAD5BD9CB469FA16570867728950E')).toBe(id);
  });

  it.each([
    ['another prefix', 'KS0f8fad5bd9cb469fa16570867728950e'],
    ['31 digits', 'AC0f8fad5bd9cb469fa16570867728950'],
    ['33 digits', 'AC0f8fad5bd9cb469fa16570867728950e0'],
    ['a non-hex digit', 'AC0f8fad5bd9cb469fa16570867728950g'],
    ['nothing', ''],
  ])('names no UUID for %s', (_name, sid) => {
    expect(uuidOfTwilioSid('AC', sid)).toBeNull();
  });

  it('refuses to make a sid of something that is not a UUID', () => {
    expect(() => twilioSid('AC', 'nope')).toThrow(TypeError);
  });
});
