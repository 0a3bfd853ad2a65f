import { VONAGE_PROBLEM_RULES, VONAGE_STATUS_RULES, classifyVonageAnswer, problemCode } from './vonage-outcomes';

const messages = (code: string) => `https://developer.vonage.com/api-errors/messages#${code}`;
const generic = (code: string) => `https://developer.vonage.com/api-errors#${code}`;

// Written out by hand from Vonage's error lists, not derived from the table: one row each.
const problemCases: [status: number, type: string, counts: boolean, cause: string][] = [
  [429, messages('1000'), true, 'rate-limited'],
  [422, messages('1010'), false, 'bad-request'],
  [422, messages('1020'), false, 'bad-request'],
  [500, messages('1030'), true, 'http-5xx'],
  [422, messages('1040'), false, 'invalid-number'],
  [422, messages('1050'), false, 'invalid-number'],
  [403, messages('1060'), true, 'account'],
  [402, messages('1070'), true, 'account'],
  [403, messages('1080'), true, 'account'],
  [422, messages('1090'), false, 'bad-request'],
  [500, messages('1100'), true, 'http-5xx'],
  [422, messages('1120'), true, 'rejected'],
  [401, generic('unauthorized'), true, 'auth'],
  [401, generic('invalid-api-key'), true, 'auth'],
  [401, generic('jwt-expired'), true, 'auth'],
  [401, generic('jwt-revoked'), true, 'auth'],
  [401, generic('invalid-signature'), true, 'auth'],
  [403, generic('forbidden'), true, 'account'],
  [403, generic('unprovisioned'), true, 'account'],
  [403, generic('account-suspended'), true, 'account'],
  [402, generic('low-balance'), true, 'account'],
  [404, generic('not-found'), true, 'rejected'],
  [422, generic('invalid-params'), false, 'bad-request'],
];

const statusCases: [status: number, counts: boolean, cause: string][] = [
  [429, true, 'rate-limited'],
  [408, true, 'timeout'],
  [503, true, 'http-5xx'],
  [401, true, 'auth'],
  [400, false, 'bad-request'],
  [422, false, 'bad-request'],
  [403, true, 'rejected'],
];

describe('Vonage outcome table', () => {
  it('has one test case per row', () => {
    expect(problemCases.map(([, type]) => type.split('#')[1])).toEqual(VONAGE_PROBLEM_RULES.map((r) => r.key));
    expect(statusCases).toHaveLength(VONAGE_STATUS_RULES.length);
  });

  it.each(problemCases)('HTTP %i %s: counts against the provider %s (%s)', (status, type, counts, cause) => {
    const reading = classifyVonageAnswer(status, { type, title: 'Vonage title', detail: 'Vonage detail' });
    expect(reading).toMatchObject({ ok: false, rule: { countsAgainstProvider: counts, cause } });
    expect(reading).toMatchObject({ detail: 'Vonage title: Vonage detail' });
  });

  it.each(statusCases)('HTTP %i without a known code: counts %s (%s)', (status, counts, cause) => {
    expect(classifyVonageAnswer(status, { type: generic('something-new') })).toMatchObject({
      ok: false,
      rule: { countsAgainstProvider: counts, cause },
    });
    expect(classifyVonageAnswer(status, 'not json')).toMatchObject({ ok: false, rule: { countsAgainstProvider: counts, cause } });
  });

  it('a known code wins over the status: 422 with 1120 (our sender refused) counts, 429 with 1020 does not', () => {
    expect(classifyVonageAnswer(422, { type: messages('1120') })).toMatchObject({ rule: { countsAgainstProvider: true } });
    expect(classifyVonageAnswer(429, { type: messages('1020') })).toMatchObject({ rule: { countsAgainstProvider: false } });
  });

  it('2xx is ok; 3xx counts as malformed', () => {
    expect(classifyVonageAnswer(202, {})).toEqual({ ok: true });
    expect(classifyVonageAnswer(200, {})).toEqual({ ok: true });
    expect(classifyVonageAnswer(302, {})).toMatchObject({ ok: false, rule: { countsAgainstProvider: true, cause: 'malformed' } });
  });

  it('reads the code after # only', () => {
    expect(problemCode({ type: messages('1000') })).toBe('1000');
    expect(problemCode({ type: 'https://developer.vonage.com/api-errors/messages#' })).toBeUndefined();
    expect(problemCode({ type: 'no-hash' })).toBeUndefined();
    expect(problemCode(null)).toBeUndefined();
    expect(problemCode({ type: 7 })).toBeUndefined();
  });
});
