import { ProviderCallFailure } from './errors';

describe('ProviderCallFailure', () => {
  const failure = new ProviderCallFailure('primary', { countsAgainstProvider: true, cause: 'http-5xx', status: 503 }, 'HTTP 503 on bind');

  it('makes its reason line of the provider and the detail, and keeps both as fields', () => {
    expect(failure.reason).toBe('primary: HTTP 503 on bind');
    expect(failure.provider).toBe('primary');
    expect(failure.detail).toBe('HTTP 503 on bind');
  });

  it('has as its own data the classification and the reason line only, as a plain failure does', () => {
    expect(Object.keys(failure).sort()).toEqual(['cause', 'countsAgainstProvider', 'reason', 'status']);
    expect(JSON.parse(JSON.stringify(failure))).toEqual({
      countsAgainstProvider: true,
      cause: 'http-5xx',
      status: 503,
      reason: 'primary: HTTP 503 on bind',
    });
    expect('vendorCode' in new ProviderCallFailure('p', { countsAgainstProvider: false, cause: 'rejected' }, 'x')).toBe(false);
  });
});
