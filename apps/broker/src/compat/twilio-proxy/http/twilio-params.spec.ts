import { TwilioParams } from './twilio-params';

const code80701 = expect.objectContaining({ code: 80701 }) as unknown as Error;

describe('Twilio request parameters', () => {
  it('reads whole numbers within their range, both ends included', () => {
    const ttl = (v: string) => TwilioParams.of({ Ttl: v }).integer('Ttl', { min: 0, max: 604_800 });
    expect(ttl('0')).toBe(0);
    expect(ttl('604800')).toBe(604_800);
    for (const bad of ['-1', '604801', '1.5', '', 'ten']) expect(() => ttl(bad)).toThrow(code80701);
    expect(TwilioParams.of({}).integer('Ttl', { min: 0, max: 1 })).toBeUndefined();
  });

  it('reads true and false as Twilio’s clients and docs write them', () => {
    expect(TwilioParams.of({ IsReserved: 'true' }).boolean('IsReserved')).toBe(true);
    expect(TwilioParams.of({ IsReserved: 'False' }).boolean('IsReserved')).toBe(false);
    expect(() => TwilioParams.of({ IsReserved: 'yes' }).boolean('IsReserved')).toThrow(code80701);
  });

  it('takes an http(s) URL, and an empty one as clearing it', () => {
    expect(TwilioParams.of({ CallbackUrl: 'https://a.example/x?y=1' }).url('CallbackUrl')).toBe('https://a.example/x?y=1');
    expect(TwilioParams.of({ CallbackUrl: '' }).url('CallbackUrl')).toBeNull();
    expect(() => TwilioParams.of({ CallbackUrl: 'ftp://a.example' }).url('CallbackUrl')).toThrow(code80701);
    expect(() => TwilioParams.of({ CallbackUrl: `https://a.example/${'x'.repeat(2048)}` }).url('CallbackUrl')).toThrow(code80701);
  });

  it('reads ISO 8601 instants as Twilio’s clients send them', () => {
    expect(TwilioParams.of({ DateExpiry: '2030-07-30T20:00:00Z' }).dateTime('DateExpiry')).toEqual(new Date('2030-07-30T20:00:00Z'));
    expect(TwilioParams.of({ DateExpiry: '2030-07-30T22:00:00.500+02:00' }).dateTime('DateExpiry')).toEqual(
      new Date('2030-07-30T20:00:00.500Z'),
    );
    for (const bad of ['2030-07-30', 'tomorrow', '2030-02-30T00:00:00Z'])
      expect(() => TwilioParams.of({ DateExpiry: bad }).dateTime('DateExpiry')).toThrow(code80701);
  });

  it('names the parameter, refuses one given twice or with control characters, and reads repeated ones as a list', () => {
    expect(() => TwilioParams.of({}).string('UniqueName', { required: true })).toThrow(
      expect.objectContaining({ message: expect.stringContaining("'UniqueName'") }) as unknown as Error,
    );
    expect(() => TwilioParams.of({ UniqueName: ['a', 'b'] }).string('UniqueName')).toThrow(code80701);
    expect(() => TwilioParams.of({ UniqueName: 'a\u0007' }).string('UniqueName')).toThrow(code80701);
    expect(() => TwilioParams.of({ UniqueName: 'x'.repeat(192) }).string('UniqueName', { max: 191 })).toThrow(code80701);
    expect(TwilioParams.of({ UniqueName: 'x'.repeat(191) }).string('UniqueName', { max: 191 })).toHaveLength(191);
    expect(TwilioParams.of({ Participants: ['{}', '{}'] }).list('Participants')).toEqual(['{}', '{}']);
    expect(TwilioParams.of({ Participants: '{}' }).list('Participants')).toEqual(['{}']);
    expect(TwilioParams.of(null).list('Participants')).toEqual([]);
  });
});
