/**
 * Where webhooks may go (SSRF protection). A callback URL is refused at registration when it is not
 * http(s), longer than 2,048 characters, carries credentials, or names a host that is not public:
 * `localhost`, a single-label or special-use name (`.local`, `.internal`, …), or a loopback, private,
 * link-local, CGNAT, multicast, reserved, IPv4-mapped or NAT64 address in any spelling (the WHATWG URL
 * parser turns `2130706433`, `0x7f.1` and `0177.0.0.1` into `127.0.0.1` before we look). The resolved
 * address is checked again at connect time (see `guardedLookup`), so a name that later points inside fails.
 */
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';

export const MAX_CALLBACK_URL_LENGTH = 2048;

interface TargetRules {
  /** Development and tests: loopback and private targets allowed. */
  readonly allowPrivateTargets: boolean;
  /** Lowest port allowed besides 80 and 443 (WEBHOOK_MIN_PORT, default 1024): no probing of well-known services. */
  readonly minPort?: number;
}

const DEFAULT_MIN_CALLBACK_PORT = 1024;

/** Names under these are never public (RFC 6761, RFC 6762, RFC 8375, ICANN's `.internal`, common LAN suffixes). */
const SPECIAL_USE_SUFFIXES = [
  'localhost',
  'local',
  'localdomain',
  'internal',
  'intranet',
  'lan',
  'home',
  'corp',
  'private',
  'test',
  'invalid',
  'example',
  'onion',
  'alt',
  'arpa',
];

const IPV4_BLOCKS: ReadonlyArray<readonly [string, string]> = [
  ['0.0.0.0/8', 'a "this network" address'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a shared (CGNAT) address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address'],
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'an IETF protocol address'],
  ['192.0.2.0/24', 'a documentation address'],
  ['192.88.99.0/24', 'a 6to4 relay address'],
  ['192.168.0.0/16', 'a private address'],
  ['198.18.0.0/15', 'a benchmarking address'],
  ['198.51.100.0/24', 'a documentation address'],
  ['203.0.113.0/24', 'a documentation address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['240.0.0.0/4', 'a reserved address'],
];

const IPV4_RANGES = IPV4_BLOCKS.map(([cidr, reason]) => {
  const [base, bits] = cidr.split('/');
  const mask = Number(bits) === 0 ? 0 : (0xffffffff << (32 - Number(bits))) >>> 0;
  return { network: (parseIPv4(base)! & mask) >>> 0, mask, reason };
});

/** A dotted-quad IPv4 address as a 32-bit number, or null. Only the canonical form: the URL parser has normalised the rest. */
function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    value = value * 256 + Number(part);
  }
  return value >>> 0;
}

/** An IPv6 address as its eight 16-bit groups, or null. Accepts `::` compression, a dotted IPv4 tail and a zone. */
export function parseIPv6(text: string): number[] | null {
  let s = text.replace(/^\[|\]$/g, '');
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return null;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.')) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (v4 === null) return null;
    tail = [v4 >>> 16, v4 & 0xffff];
    s = s.slice(0, lastColon + 1);
    if (!s.endsWith('::')) s = s.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string): number[] | null => {
    if (part === '') return [];
    const groups = part.split(':');
    if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return null;
    return groups.map((g) => parseInt(g, 16));
  };
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  if (head === null || rest === null) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1) return known === 8 ? [...head, ...tail] : null;
  if (known > 7) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
}

function ipv4Problem(value: number): string | null {
  for (const range of IPV4_RANGES) if ((value & range.mask) >>> 0 === range.network) return range.reason;
  return null;
}

function ipv6Problem(g: number[]): string | null {
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'the unspecified address';
  if (zeros(0, 7) && g[7] === 1) return 'a loopback address';
  if (zeros(0, 5) && g[5] === 0xffff) return 'an IPv4-mapped address';
  if (zeros(0, 6)) return 'an IPv4-compatible address';
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return 'an IPv4-translated address';
  if (g[0] === 0x64 && g[1] === 0xff9b && (zeros(2, 6) || g[2] === 1)) return 'a NAT64 address';
  if (g[0] === 0x100 && zeros(1, 4)) return 'a discard-only address';
  if ((g[0] & 0xfe00) === 0xfc00) return 'a unique local (private) address';
  if ((g[0] & 0xffc0) === 0xfe80) return 'a link-local address';
  if ((g[0] & 0xffc0) === 0xfec0) return 'a site-local address';
  if ((g[0] & 0xff00) === 0xff00) return 'a multicast address';
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'a documentation address';
  if (g[0] === 0x3fff && g[1] < 0x1000) return 'a documentation address';
  if (g[0] === 0x2002) return 'a 6to4 address';
  if (g[0] === 0x2001 && g[1] < 0x200) return 'an IETF protocol address (Teredo, …)';
  if ((g[0] & 0xe000) !== 0x2000) return 'a reserved address';
  return null;
}

/** Why an IP address is not a public unicast address, or null when it is. Unparseable text is refused too. */
export function addressProblem(address: string): string | null {
  const v4 = parseIPv4(address);
  if (v4 !== null) return ipv4Problem(v4);
  const v6 = parseIPv6(address);
  if (v6 !== null) return ipv6Problem(v6);
  return 'not an IP address';
}

function hostnameProblem(hostname: string): string | null {
  if (hostname.startsWith('[')) {
    const problem = addressProblem(hostname);
    return problem && `the host is ${problem}`;
  }
  if (parseIPv4(hostname) !== null) {
    const problem = addressProblem(hostname);
    return problem && `the host is ${problem}`;
  }
  const name = hostname.replace(/\.$/, '');
  const labels = name.split('.');
  if (labels.some((label) => label === '')) return 'the host name has an empty label';
  if (name === 'localhost' || name.endsWith('.localhost')) return 'the host is localhost';
  if (labels.length === 1) return 'the host is a single-label name';
  const special = SPECIAL_USE_SUFFIXES.find((suffix) => name.endsWith(`.${suffix}`));
  if (special) return `the host is under .${special}, which is not public`;
  return null;
}

/** Why `raw` cannot be a callback URL, or null when it can. */
export function callbackUrlProblem(raw: unknown, rules: TargetRules): string | null {
  if (typeof raw !== 'string' || raw.length === 0) return 'must be an http or https URL';
  if (raw.length > MAX_CALLBACK_URL_LENGTH) return `must be at most ${MAX_CALLBACK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an http or https URL';
  }
  // As written, not as the URL parser repairs it: `http:/x` and embedded whitespace are refused.
  if (!/^https?:\/\/[^\s/?#]/i.test(raw) || /[\u0000-\u0020\u007f]/.test(raw)) return 'must be an http or https URL';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  const minPort = rules.minPort ?? DEFAULT_MIN_CALLBACK_PORT;
  const port = url.port === '' ? null : Number(url.port);
  if (port !== null && port !== 80 && port !== 443 && port < minPort) return `must use port 80, 443 or ${minPort}-65535`;
  if (rules.allowPrivateTargets) return null;
  const problem = hostnameProblem(url.hostname.toLowerCase());
  return problem && `must point to a public address: ${problem}`;
}

/** Resolves a host name to every address it has. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true });

/** A connection refused because the target is not public; the message says which address and why. */
class ForbiddenTargetError extends Error {
  override name = 'ForbiddenTargetError';
  readonly code = 'ERR_WEBHOOK_FORBIDDEN_TARGET';
}

/**
 * A `lookup` for `net.connect` (through undici's `connect` option) that refuses when any address the
 * name resolves to is not public: the check happens on the address actually connected to, after DNS.
 */
export function guardedLookup(resolve: Resolver, rules: TargetRules): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    resolve(hostname)
      .then((all) => {
        const addresses = wanted === 0 ? all : all.filter((a) => a.family === wanted);
        if (!rules.allowPrivateTargets) {
          for (const { address } of all) {
            const problem = addressProblem(address);
            // The customer sees this text: it says why, never which address a name resolved to.
            if (problem) throw new ForbiddenTargetError(`refused: ${hostname} resolves to ${problem}`);
          }
        }
        if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}
