/**
 * 1,000 generated malformed requests (fast-check) against the session, admin and provider-webhook
 * routes of the running broker: none is answered 5xx, every error is application/problem+json with
 * `type`, `title` and a `status` equal to the HTTP status, and a request that cannot be valid is a 4xx
 * (only the few generators marked `mayPass`, which can make a valid request by chance, may get a 2xx).
 *
 * Each request starts from a valid one and breaks it (a field of the wrong type or shape, a bad
 * number, an unknown field, an id or query that is not one, a bad signature or none, a body that is
 * not JSON...), so it cannot succeed by chance where success would mean a 201. The seed is fixed so a
 * run can be replayed (FUZZ_SEED overrides it).
 */
import fc from 'fast-check';
import { signSimWebhook } from '@app/cpaas';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV } from './support/api-client';
import { TEST_WEBHOOK_SECRET, startBroker, type BrokerHarness } from './support/broker-harness';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_715);

interface FuzzRequest {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Set by the generators that can make a valid request by chance; every other request must get a 4xx. */
  mayPass?: boolean;
}

/** Header-safe text (fetch refuses control characters in header values). */
const headerText = fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, 'x'));
const junk = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 80 }), fc.constant(null), fc.integer(), fc.double());
const notE164 = fc.oneof(
  fc.string({ maxLength: 20 }).filter((s) => !/^\+[1-9]\d{6,14}$/.test(s)),
  fc.constantFrom('+0123456789', '2348030000001', '+23480300000011234567', '+234-803', '', ' +2348030000001'),
  junk.filter((v) => typeof v !== 'string'),
);
const pathSegment = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.uuid(),
  fc.constantFrom('..', '%', '%2F', 'null', '0', '-1', "' OR 1=1 --", '\u0000', 'ffffffff-ffff-ffff-ffff-fffffffffffff'),
);
const contentType = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
);

/** Bodies that are not JSON, or JSON that is not an object. */
const rawNonsense = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.constantFrom('{', '{"channel":', '[]', 'null', '"sms"', '{"participants": [}', '\u0000\u0001', '{}'.repeat(50)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
);

const validSession = { channel: 'sms', participants: [{ number: '+2348030000001' }, { number: '+2348030000002' }] };

/** A create with exactly one thing broken (and maybe more). */
const brokenSessionBody = fc.oneof(
  junk.filter((v) => v !== 'sms' && v !== 'voice').map((channel) => ({ ...validSession, channel })),
  junk.map((participants) => ({ ...validSession, participants })),
  notE164.map((number) => ({ ...validSession, participants: [{ number }, { number: '+2348030000002' }] })),
  fc.constant({ ...validSession, participants: [{ number: '+2348030000001' }, { number: '+2348030000001' }] }),
  fc
    .array(fc.record({ number: fc.constantFrom('+2348030000003', '+2348030000004') }), { maxLength: 5 })
    .filter((p) => p.length !== 2)
    .map((participants) => ({ ...validSession, participants })),
  // null is an optional field left out (ttlSeconds, callbackUrl, metadata): valid, so not generated here.
  junk
    .filter((v) => v !== null && !(Number.isInteger(v) && (v as number) >= 60 && (v as number) <= 604_800))
    .map((ttlSeconds) => ({ ...validSession, ttlSeconds })),
  fc
    .oneof(
      junk.filter((v) => v !== null && typeof v !== 'string'),
      fc.constantFrom('not a url', 'ftp://example.com/x', 'javascript:alert(1)', `https://example.com/${'a'.repeat(2100)}`),
    )
    .map((callbackUrl) => ({ ...validSession, callbackUrl })),
  fc
    .oneof(fc.array(junk), fc.string(), fc.integer(), fc.constant({ big: 'x'.repeat(5000) }))
    .map((metadata) => ({ ...validSession, metadata })),
  fc
    .tuple(
      fc
        .string({ minLength: 1, maxLength: 20 })
        .filter((k) => !['channel', 'participants', 'ttlSeconds', 'callbackUrl', 'metadata', '__proto__'].includes(k)),
      junk,
    )
    .map(([key, value]) => ({ ...validSession, [key]: value })),
);

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const badAuth = fc.oneof(
  fc.constant({} as Record<string, string>),
  headerText.map((t) => ({ authorization: t })),
  headerText.map((t) => bearer(t.replace(/\s/g, '') || 'x')),
  fc.constant(bearer(ADMIN_TOKEN)),
);

const sessionRequests: fc.Arbitrary<FuzzRequest> = fc.oneof(
  fc.tuple(brokenSessionBody, contentType).map(([body, type]) => ({
    method: 'POST' as const,
    path: '/v1/sessions',
    headers: { ...bearer(API_KEY), 'content-type': type },
    body: JSON.stringify(body),
  })),
  rawNonsense.map((body) => ({
    method: 'POST' as const,
    path: '/v1/sessions',
    headers: { ...bearer(API_KEY), 'content-type': 'application/json' },
    body,
  })),
  fc.tuple(badAuth, fc.constantFrom('POST', 'GET') as fc.Arbitrary<'POST' | 'GET'>).map(([headers, method]) => ({
    method,
    path: '/v1/sessions',
    headers: { ...headers, 'content-type': 'application/json' },
    body: method === 'POST' ? JSON.stringify(validSession) : undefined,
  })),
  fc
    .tuple(
      pathSegment,
      fc.constantFrom('GET', 'DELETE', 'PUT', 'PATCH') as fc.Arbitrary<FuzzRequest['method']>,
      fc.constantFrom('', '/interactions', '/x'),
    )
    .map(([id, method, suffix]) => ({
      method,
      path: `/v1/sessions/${encodeURIComponent(id)}${suffix}`,
      headers: bearer(API_KEY),
    })),
  fc
    .record({
      status: fc.option(fc.string({ maxLength: 12 })),
      limit: fc.option(fc.oneof(fc.string({ maxLength: 6 }), fc.integer().map(String))),
      cursor: fc.option(fc.string({ maxLength: 60 })),
    })
    .map((q) => {
      const query = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== null)).toString();
      return { method: 'GET' as const, path: `/v1/sessions?${query}`, headers: bearer(API_KEY), mayPass: true };
    }),
);

const validNumber = { provider: 'primary', number: '+2349010000999', capabilities: ['sms', 'voice'] };
const adminRequests: fc.Arbitrary<FuzzRequest> = fc.oneof(
  fc
    .oneof(
      junk.map((provider) => ({ ...validNumber, provider })),
      notE164.map((number) => ({ ...validNumber, number })),
      fc
        .oneof(
          junk,
          fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }).filter((c) => !c.every((v) => v === 'sms' || v === 'voice')),
          fc.constant(['sms', 'sms']),
          fc.constant([]),
        )
        .map((capabilities) => ({ ...validNumber, capabilities })),
      fc
        .string({ minLength: 1, maxLength: 12 })
        .filter((k) => !['provider', 'number', 'capabilities', '__proto__'].includes(k))
        .map((k) => ({ ...validNumber, [k]: 1 })),
      junk,
    )
    .map((body) => ({
      method: 'POST' as const,
      path: '/v1/admin/numbers',
      headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })),
  rawNonsense.map((body) => ({
    method: 'POST' as const,
    path: '/v1/admin/numbers',
    headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
    body,
  })),
  fc
    .tuple(pathSegment, fc.constantFrom('DELETE', 'GET', 'PUT') as fc.Arbitrary<FuzzRequest['method']>)
    .map(([id, method]) => ({ method, path: `/v1/admin/numbers/${encodeURIComponent(id)}`, headers: bearer(ADMIN_TOKEN) })),
  fc.string({ maxLength: 40 }).map((provider) => ({
    method: 'GET' as const,
    path: `/v1/admin/numbers?provider=${encodeURIComponent(provider)}`,
    headers: bearer(ADMIN_TOKEN),
    mayPass: true,
  })),
  badAuth
    .filter((h) => h.authorization !== `Bearer ${ADMIN_TOKEN}`)
    .map((headers) => ({
      method: 'POST' as const,
      path: '/v1/admin/numbers',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(validNumber),
    })),
);

const validInbound = {
  eventId: 'evt-1',
  from: '+2348030000001',
  to: '+2349010000001',
  at: '2026-07-15T12:00:00.000Z',
  messageId: 'm-1',
  callId: 'c-1',
  text: 'hi',
};
const inboundBody = fc.oneof(
  junk,
  fc
    .constantFrom('eventId', 'from', 'to', 'at', 'messageId', 'callId', 'text', 'type', 'answer', 'durationSec')
    .chain((field) =>
      junk.map((value) => ({ ...validInbound, type: 'call.completed', answer: 'answered', durationSec: 3, [field]: value })),
    ),
  fc.constantFrom('eventId', 'from', 'to', 'at', 'messageId', 'callId', 'text').map((field) => {
    const { [field as keyof typeof validInbound]: _dropped, ...rest } = validInbound;
    return rest;
  }),
);
const inboundRequests: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.oneof(fc.constantFrom('primary', 'failover'), pathSegment),
    fc.constantFrom('inbound/sms', 'inbound/voice', 'status', 'inbound/fax'),
    fc.oneof(
      inboundBody.map((b) => JSON.stringify(b) ?? 'null'),
      rawNonsense,
    ),
    fc.constantFrom('signed', 'signed', 'signed', 'unsigned', 'bad-signature', 'stale', 'junk-headers'),
    headerText,
  )
  .map(([name, route, body, signing, text]) => {
    const now = Math.floor(Date.now() / 1000);
    const path = `/v1/providers/${encodeURIComponent(name)}/${route}`;
    const signed = signSimWebhook(
      TEST_WEBHOOK_SECRET,
      { provider: name, method: 'POST', path },
      body,
      signing === 'stale' ? now - 3600 : now,
    );
    const signature: Record<string, string> =
      signing === 'signed' || signing === 'stale'
        ? signed
        : signing === 'bad-signature'
          ? { ...signed, 'x-sim-signature': `v1=${'0'.repeat(64)}` }
          : signing === 'junk-headers'
            ? { 'x-sim-signature': text, 'x-sim-timestamp': text }
            : {};
    return {
      method: 'POST' as const,
      path,
      headers: { 'content-type': 'application/json', ...signature },
      body,
      // A signed body with one field replaced may still be a valid event (say, another text).
      mayPass: signing === 'signed',
    };
  });

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

function shown(request: FuzzRequest): string {
  return `${request.method} ${request.path} ${(request.body ?? '').slice(0, 120)}`;
}

function problemIssue(request: FuzzRequest, answer: Answer): string | undefined {
  if (answer.status >= 500)
    return `${answer.status} for ${request.method} ${request.path} ${(request.body ?? '').slice(0, 60)}: ${answer.body.slice(0, 300)}`;
  if (answer.status < 400) return request.mayPass ? undefined : `${answer.status} for a request that cannot be valid: ${shown(request)}`;
  if (!answer.contentType.startsWith('application/problem+json'))
    return `${answer.status} as ${answer.contentType} for ${request.method} ${request.path}`;
  let problem: { type?: unknown; title?: unknown; status?: unknown };
  try {
    problem = JSON.parse(answer.body) as typeof problem;
  } catch {
    return `${answer.status} with a body that is not JSON for ${request.method} ${request.path}`;
  }
  if (typeof problem.type !== 'string' || typeof problem.title !== 'string' || problem.status !== answer.status) {
    return `${answer.status} with an incomplete problem ${answer.body.slice(0, 200)} for ${request.method} ${request.path}`;
  }
  return undefined;
}

describe('fuzzing the HTTP API with malformed requests', () => {
  let broker: BrokerHarness;

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV, SIM_SEED_NUMBERS: '3', BREAKER_HEALTH_INTERVAL_MS: '3600000' });
  });
  afterAll(() => broker.close());

  async function send(request: FuzzRequest): Promise<Answer> {
    const res = await fetch(broker.url + request.path, { method: request.method, headers: request.headers, body: request.body });
    const answer = { status: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
    return answer;
  }

  async function fuzz(arbitrary: fc.Arbitrary<FuzzRequest>, numRuns: number, seed: number): Promise<void> {
    const errors = new Set<number>();
    await fc.assert(
      fc.asyncProperty(arbitrary, async (request) => {
        const answer = await send(request);
        if (answer.status >= 400) errors.add(answer.status);
        const issue = problemIssue(request, answer);
        if (issue) throw new Error(issue);
      }),
      { numRuns, seed, endOnFailure: true },
    );
    // The broker told errors of several kinds apart, not one answer to everything.
    expect(errors.size).toBeGreaterThanOrEqual(3);
  }

  it('session routes: 450 requests, no 5xx, every error problem+json', () => fuzz(sessionRequests, 450, SEED), 60_000);

  it('admin routes: 250 requests, no 5xx, every error problem+json', () => fuzz(adminRequests, 250, SEED + 1), 60_000);

  it('provider webhook routes: 300 requests, no 5xx, every error problem+json', () => fuzz(inboundRequests, 300, SEED + 2), 60_000);

  it('edge bodies: too large, empty, wrong type or encoding: no 5xx, each a problem+json', async () => {
    const edge: FuzzRequest[] = [
      {
        method: 'POST',
        path: '/v1/sessions',
        headers: { ...bearer(API_KEY), 'content-type': 'application/json' },
        body: `{"metadata":"${'x'.repeat(1_100_000)}"}`,
      },
      { method: 'POST', path: '/v1/sessions', headers: { ...bearer(API_KEY), 'content-type': 'application/json' }, body: '' },
      {
        method: 'POST',
        path: '/v1/sessions',
        headers: { ...bearer(API_KEY), 'content-type': 'application/json; charset=utf-16' },
        body: JSON.stringify(validSession),
      },
      {
        method: 'POST',
        path: '/v1/sessions',
        headers: { ...bearer(API_KEY), 'content-type': 'application/json', 'content-encoding': 'br' },
        body: JSON.stringify(validSession),
      },
      {
        method: 'POST',
        path: '/v1/admin/numbers',
        headers: { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' },
        body: '{"__proto__":{"polluted":true},"provider":"primary"}',
      },
      {
        method: 'POST',
        path: '/v1/providers/primary/inbound/sms',
        headers: { 'content-type': 'application/json' },
        body: 'x'.repeat(2_000_000),
      },
    ];
    const issues: string[] = [];
    for (const request of edge) {
      const issue = problemIssue(request, await send(request));
      if (issue) issues.push(issue);
    }
    expect(issues).toEqual([]);
  }, 60_000);
  /* Two inputs that once answered 500, kept as regression tests. */
  async function problemFor(request: FuzzRequest): Promise<string | undefined> {
    return problemIssue(request, await send(request));
  }

  it('a deeply nested JSON body is a 400, not a 500 (the transformer would overflow the stack)', async () => {
    const headers = { ...bearer(API_KEY), 'content-type': 'application/json' };
    expect(
      await problemFor({ method: 'POST', path: '/v1/sessions', headers, body: '['.repeat(100_000) + ']'.repeat(100_000) }),
    ).toBeUndefined();
    expect(
      await problemFor({ method: 'POST', path: '/v1/sessions', headers, body: `{"metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}` }),
    ).toBeUndefined();
  });

  it('POST /v1/admin/numbers with "capabilities": null is a 400, not a 500', async () => {
    const body = JSON.stringify({ ...validNumber, capabilities: null });
    const headers = { ...bearer(ADMIN_TOKEN), 'content-type': 'application/json' };
    expect(await problemFor({ method: 'POST', path: '/v1/admin/numbers', headers, body })).toBeUndefined();
  });
});
