/**
 * The two time rules of a session rescue, in virtual time (plain numbers: the breakers' clock and the
 * pacer's), each on both sides of its boundary: an account's sessions are due once their provider has
 * been OPEN for the account's afterSeconds, and moves are at least 1 / RESCUE_MOVES_PER_SECOND apart.
 */
import { MovePacer, dueAccounts, openOutages } from './rescue-rules';

const OPENED_AT = 1_000_000;
const accounts = [
  { id: 'now', afterSeconds: 0 },
  { id: 'minute', afterSeconds: 60 },
  { id: 'hour', afterSeconds: 3600 },
];

describe('dueAccounts', () => {
  it('is due exactly when the provider has been OPEN for afterSeconds, not a millisecond before', () => {
    expect(dueAccounts(OPENED_AT, OPENED_AT + 59_999, accounts).map((a) => a.id)).toEqual(['now']);
    expect(dueAccounts(OPENED_AT, OPENED_AT + 60_000, accounts).map((a) => a.id)).toEqual(['now', 'minute']);
    expect(dueAccounts(OPENED_AT, OPENED_AT + 3_599_999, accounts).map((a) => a.id)).toEqual(['now', 'minute']);
    expect(dueAccounts(OPENED_AT, OPENED_AT + 3_600_000, accounts).map((a) => a.id)).toEqual(['now', 'minute', 'hour']);
  });

  it('with afterSeconds 0, the moment the breaker opened; never before it opened', () => {
    expect(dueAccounts(OPENED_AT, OPENED_AT, accounts).map((a) => a.id)).toEqual(['now']);
    expect(dueAccounts(OPENED_AT, OPENED_AT - 1, accounts)).toEqual([]);
  });
});

describe('openOutages', () => {
  const status = (state: 'CLOSED' | 'OPEN' | 'HALF_OPEN', openedAt: number | null, lastError: string | null = null) => ({
    state,
    openedAt,
    lastError,
  });

  it('is every provider whose breaker is OPEN, with when it opened; HALF_OPEN and CLOSED ones are not', () => {
    const providers = [
      { name: 'primary', status: status('OPEN', OPENED_AT, 'primary: HTTP 503 on bind') },
      { name: 'failover', status: status('CLOSED', null) },
      { name: 'third', status: status('HALF_OPEN', null) },
    ];
    expect(openOutages(providers)).toEqual([{ provider: 'primary', openedAt: OPENED_AT, lastError: 'primary: HTTP 503 on bind' }]);
  });
});

describe('MovePacer', () => {
  it('lets the first move go at once, and each next one 1 / rate seconds after the last', () => {
    const pacer = new MovePacer(2);
    expect(pacer.waitMs(0)).toBe(0);
    pacer.moved(0);
    expect(pacer.waitMs(0)).toBe(500);
    expect(pacer.waitMs(499)).toBe(1);
    expect(pacer.waitMs(500)).toBe(0);
    pacer.moved(500);
    expect(pacer.waitMs(999)).toBe(1);
    expect(pacer.waitMs(1000)).toBe(0);
  });

  it('paces a fractional rate: 0.1 a second is one move every 10 s', () => {
    const pacer = new MovePacer(0.1);
    pacer.moved(5_000);
    expect(pacer.waitMs(14_999)).toBe(1);
    expect(pacer.waitMs(15_000)).toBe(0);
  });

  it('does not bank quiet time: after a long pause the next move goes at once, the one after it a full interval later', () => {
    const pacer = new MovePacer(10);
    pacer.moved(0);
    expect(pacer.waitMs(60_000)).toBe(0);
    pacer.moved(60_000);
    expect(pacer.waitMs(60_099)).toBe(1);
    expect(pacer.waitMs(60_100)).toBe(0);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new MovePacer(0)).toThrow(RangeError);
  });
});
