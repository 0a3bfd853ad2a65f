import type { LookupAddress } from 'node:dns';
import { HOSTILE_URLS } from '@app/testing';
import { addressProblem, callbackUrlProblem, guardedLookup, parseIPv6, type Resolver } from './target-policy';

const strict = { allowPrivateTargets: false };
const loose = { allowPrivateTargets: true };

describe('callback URL registration (SSRF)', () => {
  it(`refuses every one of ${HOSTILE_URLS.length} hostile URLs`, () => {
    expect(HOSTILE_URLS.length).toBeGreaterThanOrEqual(30);
    const accepted = HOSTILE_URLS.filter((url) => callbackUrlProblem(url, strict) === null);
    expect(accepted).toEqual([]);
  });

  it.each([
    ['http://127.0.0.1/', 'must point to a public address: the host is a loopback address'],
    ['http://2130706433/', 'must point to a public address: the host is a loopback address'],
    ['http://[::ffff:127.0.0.1]/', 'must point to a public address: the host is an IPv4-mapped address'],
    ['http://[64:ff9b::7f00:1]/', 'must point to a public address: the host is a NAT64 address'],
    ['http://100.64.0.1/', 'must point to a public address: the host is a shared (CGNAT) address'],
    ['http://intranet/', 'must point to a public address: the host is a single-label name'],
    ['http://printer.local/', 'must point to a public address: the host is under .local, which is not public'],
    ['http://localhost./', 'must point to a public address: the host is localhost'],
    ['ftp://example.com/', 'must be an http or https URL'],
    ['http://user:pass@example.com/', 'must not contain credentials'],
  ])('says why %s is refused', (url, reason) => {
    expect(callbackUrlProblem(url, strict)).toBe(reason);
  });

  it('accepts public http and https URLs up to 2,048 characters', () => {
    const base = 'https://hooks.example.com/';
    for (const url of [
      'https://example.com/hooks',
      'http://api.customer.io:8443/webhooks?x=1',
      'https://93.184.216.34/hook',
      'https://[2606:4700:4700::1111]/hook',
      'https://example.com./fqdn',
      `${base}${'a'.repeat(2048 - base.length)}`,
    ]) {
      expect(callbackUrlProblem(url, strict)).toBeNull();
    }
    expect(callbackUrlProblem(`${base}${'a'.repeat(2049 - base.length)}`, strict)).toBe('must be at most 2048 characters');
  });

  it('lets development and tests use loopback when WEBHOOK_ALLOW_PRIVATE_TARGETS is on, never other schemes', () => {
    expect(callbackUrlProblem('http://127.0.0.1:3000/hooks', loose)).toBeNull();
    expect(callbackUrlProblem('http://localhost/', loose)).toBeNull();
    expect(callbackUrlProblem('file:///etc/passwd', loose)).toBe('must be an http or https URL');
  });
});

describe('address classification', () => {
  it('parses IPv6 spellings', () => {
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('::ffff:127.0.0.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseIPv6('[fe80::1%eth0]')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('1:2:3:4:5:6:7:8:9')).toBeNull();
    expect(parseIPv6('1::2::3')).toBeNull();
  });

  it('accepts public unicast only', () => {
    expect(addressProblem('93.184.216.34')).toBeNull();
    expect(addressProblem('2606:4700:4700::1111')).toBeNull();
    expect(addressProblem('172.32.0.1')).toBeNull();
    expect(addressProblem('172.31.255.255')).toBe('a private address');
    expect(addressProblem('::ffff:93.184.216.34')).toBe('an IPv4-mapped address');
    expect(addressProblem('garbage')).toBe('not an IP address');
  });
});

describe('the connect-time check (after DNS)', () => {
  function lookup(resolver: Resolver, rules = strict, options: { all?: boolean; family?: number } = { all: true }) {
    return new Promise<{ error: Error | null; address: string | LookupAddress[] }>((resolve) =>
      guardedLookup(resolver, rules)('hooks.example.com', options, (error, address) => resolve({ error, address })),
    );
  }

  it('refuses a public-looking name that resolves to 127.0.0.1 (DNS rebinding)', async () => {
    const { error } = await lookup(async () => [{ address: '127.0.0.1', family: 4 }]);
    expect(error?.message).toBe('refused: hooks.example.com resolves to a loopback address');
  });

  it('refuses when any of the addresses is not public', async () => {
    const { error } = await lookup(async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '::ffff:10.0.0.1', family: 6 },
    ]);
    expect(error?.message).toMatch(/resolves to an IPv4-mapped address/);
  });

  it('passes public addresses through, in the shape net.connect asks for', async () => {
    const resolver: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ];
    expect((await lookup(resolver)).address).toHaveLength(2);
    expect((await lookup(resolver, strict, { family: 6 })).address).toBe('2606:2800:220:1::1');
  });

  it('allows loopback when private targets are allowed', async () => {
    const { error, address } = await lookup(async () => [{ address: '127.0.0.1', family: 4 }], loose, {});
    expect(error).toBeNull();
    expect(address).toBe('127.0.0.1');
  });
});
