import { randomUUID } from 'node:crypto';
/**
 * The findings of an outside probe (issue #17), each reproduced against the running broker as an
 * attacker would send it, over HTTP only, and each answered as the fix says.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { readFile } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, OTHER_API_KEY } from './support/api-client';
import { TEST_WEBHOOK_SECRET, startBroker, startSimulator, type BrokerHarness, type SimulatorHarness } from './support/broker-harness';
import { SessionReservationRepository } from '../apps/broker/src/sessions/session-reservation.repository';
import { buildOnce, eventually, freePort, startProcess, type RunningProcess } from './support/processes';

const MAIN = 'dist/apps/broker/src/main.js';

/** The harness lifts the per-key rate limits for other tests; here they hold at their defaults. */
const DEFAULT_RATES = {
  RATE_LIMIT_CREATES_PER_SECOND: '10',
  RATE_LIMIT_CREATES_BURST: '50',
  RATE_LIMIT_READS_PER_SECOND: '50',
  RATE_LIMIT_READS_BURST: '200',
};

/** Sends `head` and then `body` on a raw socket; resolves with everything the server answered once it closes. */
function rawExchange(port: number, head: string, body = ''): { socket: Socket; answer: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const answer = new Promise<string>((done) => socket.on('close', () => done(received)));
  // The server may close while we still write: that is the point, not an error.
  socket.on('error', () => undefined);
  socket.write(head);
  if (body) socket.write(body);
  return { socket, answer };
}

function slowPost(
  port: number,
  path: string,
  headers: Record<string, string>,
  declared: number,
  sent: number,
): ReturnType<typeof rawExchange> {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json', `Content-Length: ${declared}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return rawExchange(port, `${lines.join('\r\n')}\r\n\r\n`, `{"metadata":{"x":"${'a'.repeat(Math.max(0, sent - 20))}`);
}

/** The 401s the broker has answered to creates, from its own count (`GET /metrics`). */
async function refusedCreates(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('broker_http_requests_total{route="/v1/sessions",method="POST",status="401"}'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Opens an SSE stream from `localAddress`; resolves once the status line is in. */
function openStream(
  port: number,
  localAddress: string,
): Promise<{ status: number; body: string; req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/health/cpaas/stream', localAddress }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      if (res.statusCode === 200) resolve({ status: 200, body, req, res });
      else res.on('end', () => resolve({ status: res.statusCode!, body, req, res }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET `path` with `Authorization: Bearer <key>` from `localAddress`. */
function getFrom(
  url: string,
  localAddress: string,
  key: string,
  path = '/v1/sessions?limit=1',
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { localAddress, headers: { authorization: `Bearer ${key}` } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hostile input against the running broker', () => {
  let broker: BrokerHarness;
  let port: number;

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      ...DEFAULT_RATES,
      SSE_MAX_STREAMS: '3',
      SSE_MAX_STREAMS_PER_CLIENT: '2',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '1500',
    });
    port = Number(new URL(broker.url).port);
  }, 60_000);

  afterAll(() => broker?.close());

  describe('memory before authentication', () => {
    it('answers an unauthenticated 1 MB upload from its headers, without reading the body, and ends the connection', async () => {
      const { answer } = slowPost(port, '/v1/sessions', {}, 1_000_000, 1_000);
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 401 /);
      expect(text).toMatch(/\r\nwww-authenticate: Bearer\r\n/i);
      expect(text).toMatch(/\r\nconnection: close\r\n/i);
    });

    it('refuses a wrong key the same way, and an admin route without the token', async () => {
      expect(await slowPost(port, '/v1/sessions', { Authorization: 'Bearer wrong-key-0000000000000000' }, 1_000_000, 1_000).answer).toMatch(
        /^HTTP\/1\.1 401 /,
      );
      expect(await slowPost(port, '/v1/admin/accounts', {}, 1_000_000, 1_000).answer).toMatch(/^HTTP\/1\.1 401 /);
    });

    it('cuts an authenticated body that stalls after HTTP_REQUEST_TIMEOUT_MS with a 408', async () => {
      const { answer } = slowPost(port, '/v1/sessions', { Authorization: `Bearer ${API_KEY}` }, 1_000_000, 1_000);
      expect(await answer).toMatch(/^HTTP\/1\.1 408 /);
    }, 20_000);

    it('reads at most 64 KB for a route with no authentication (provider webhooks)', async () => {
      const { answer } = slowPost(port, '/v1/providers/primary/inbound/sms', {}, 100_000, 99_000);
      expect(await answer).toMatch(/^HTTP\/1\.1 413 /);
    });

    it('answers a body with another or no content type with 415, never reading it as empty', async () => {
      for (const type of ['text/plain', undefined]) {
        const headers: Record<string, string> = { authorization: `Bearer ${API_KEY}` };
        if (type) headers['content-type'] = type;
        const res = await fetch(`${broker.url}/v1/sessions`, { method: 'POST', headers, body: new Blob(['{"channel":"sms"}']) });
        expect(res.status).toBe(415);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      }
    });
  });

  describe('text PostgreSQL cannot store, and tampered cursors', () => {
    const api = (path: string, init: RequestInit & { admin?: boolean } = {}) =>
      fetch(`${broker.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${init.admin ? ADMIN_TOKEN : API_KEY}`, 'content-type': 'application/json' },
      });
    const session = { channel: 'sms', participants: [{ number: '+2348030000101' }, { number: '+2348030000102' }] };

    it.each([
      ['a NUL in metadata', '/v1/sessions', 'POST', { ...session, metadata: { note: 'a\u0000b' } }, 'metadata.note'],
      ['a lone surrogate in a metadata key', '/v1/sessions', 'POST', { ...session, metadata: { ['k\ud800']: 1 } }, 'metadata.k\ud800'],
      ['a lone surrogate in callbackUrl', '/v1/sessions', 'POST', { ...session, callbackUrl: 'https://example.com/\ud800' }, 'callbackUrl'],
      ['a NUL in a callback URL', '/v1/account/callback-url', 'PUT', { callbackUrl: 'https://example.com/\u0000' }, 'callbackUrl'],
      ['a NUL in an account name', '/v1/admin/accounts', 'POST', { name: 'acme\u0000' }, 'name'],
      ['a lone surrogate in a disable reason', '/v1/admin/providers/primary/disable', 'POST', { reason: 'x\udc00' }, 'reason'],
    ])('answers %s with a 400 naming the field', async (_name, path, method, body, field) => {
      const res = await api(path, { method, body: JSON.stringify(body), admin: path.startsWith('/v1/admin') });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ errors: [{ field, message: expect.stringContaining('NUL') }] });
    });

    it.each([
      ['/v1/sessions?status=%00', 'status'],
      ['/v1/events?session=%00', 'session'],
    ])('answers a NUL in the query %s with a 400 naming the parameter', async (path, field) => {
      const res = await api(path);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ errors: [expect.objectContaining({ field })] });
    });

    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const id = '0b9a4c1e-8f6d-4c3b-9a2e-1f0e2d3c4b5a';
    it.each([
      ['an id that is not a UUID', forged(['2030-01-01T00:00:00.000Z', 'not-a-uuid-at-all-but-36-characters!'])],
      ['a date PostgreSQL rejects', forged(['2030-02-30T00:00:00.000Z', id])],
      ['the smallest JavaScript date', forged([-8_640_000_000_000_000, id])],
      ['a NUL', forged(['2030-01-01T00:00:00.000Z\u0000', id])],
    ])('answers a tampered cursor (%s) with a 400 on both lists', async (_name, cursor) => {
      for (const path of ['/v1/sessions', '/v1/events']) {
        const res = await api(`${path}?cursor=${cursor}`);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ errors: [{ field: 'cursor' }] });
      }
    });
  });

  describe('toll fraud', () => {
    const create = (participants: string[], channel = 'voice', key = API_KEY) =>
      fetch(`${broker.url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel, participants: participants.map((number) => ({ number })) }),
      });
    const admin = (path: string, method: string, body?: unknown) =>
      fetch(`${broker.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    it.each([
      ['a UK premium-rate number', '+449090000000', 'GB', /premium-rate/],
      ['an invalid Nigerian number', '+23480300000', 'NG', /not a valid phone number for NG/],
      ['a UK mobile, outside the countries of the pool', '+447400123456', 'GB', /in GB, which this account may not reach \(allowed: NG\)/],
    ])('refuses a session to %s with a 422 naming the number and its country', async (_name, number, country, message) => {
      const res = await create(['+2348030000201', number]);
      expect(res.status).toBe(422);
      const problem = (await res.json()) as { detail: string; country: string; errors: Array<{ field: string; message: string }> };
      expect(problem).toMatchObject({ country, errors: [{ field: 'participants[1].number' }] });
      expect(problem.detail).toContain(number);
      expect(problem.errors[0].message).toMatch(message);
    });

    it('refuses SMS to a number that cannot receive it, and a proxy number as a participant', async () => {
      const tollFree = await create(['+2348030000203', '+2348000000000'], 'sms');
      expect(tollFree.status).toBe(422);
      expect(((await tollFree.json()) as { detail: string }).detail).toMatch(/cannot receive SMS/);
      const proxy = await create(['+2348030000203', '+2349010000001'], 'sms');
      expect(proxy.status).toBe(422);
      expect(((await proxy.json()) as { detail: string }).detail).toMatch(/proxy numbers/);
    });

    it('lets an operator widen the countries of one account, and allow special-rate numbers separately', async () => {
      const { accounts } = (await (await admin('/v1/admin/accounts', 'GET')).json()) as {
        accounts: Array<{ id: string; apiKeys: Array<{ prefix: string }> }>;
      };
      const account = accounts.find((a) => API_KEY.startsWith(a.apiKeys[0].prefix))!;
      const widened = await admin(`/v1/admin/accounts/${account.id}/destinations`, 'PUT', { allowedCountries: ['NG', 'GB'] });
      expect(widened.status).toBe(200);
      expect(await widened.json()).toMatchObject({ allowedCountries: ['GB', 'NG'], allowSpecialRate: false });

      expect((await create(['+2348030000205', '+447400123456'])).status).toBe(201);
      expect((await create(['+2348030000207', '+449090000000'])).status).toBe(422);
      expect((await admin(`/v1/admin/accounts/${account.id}/destinations`, 'PUT', { allowSpecialRate: true })).status).toBe(200);
      expect((await create(['+2348030000207', '+449090000000'])).status).toBe(201);
      expect(
        (await admin(`/v1/admin/accounts/${account.id}/destinations`, 'PUT', { allowedCountries: null, allowSpecialRate: false })).status,
      ).toBe(200);
      expect((await create(['+2348030000209', '+447400123457'])).status).toBe(422);
    });
  });

  describe('callback URLs', () => {
    it.each(['https://example.com:0/hook', 'https://example.com:22/hook', 'http:/example.com/hook', 'https://exa\tmple.com/hook'])(
      'refuses %j on both routes that take one, with one validator',
      async (callbackUrl) => {
        const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
        const account = await fetch(`${broker.url}/v1/account/callback-url`, {
          method: 'PUT',
          headers,
          body: JSON.stringify({ callbackUrl }),
        });
        expect(account.status).toBe(400);
        const session = await fetch(`${broker.url}/v1/sessions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ channel: 'sms', participants: [{ number: '+2348030000501' }, { number: '+2348030000502' }], callbackUrl }),
        });
        expect(session.status).toBe(400);
      },
    );
  });

  describe('fair use of the shared pool', () => {
    it('lets one account hold at most SESSION_PARTICIPANT_LIMIT (3) active sessions for one person, then 429 saying why, while another account still can', async () => {
      const create = (other: string, key = API_KEY) =>
        fetch(`${broker.url}/v1/sessions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ channel: 'sms', participants: [{ number: '+2348099000001' }, { number: other }] }),
        });
      const statuses = [];
      for (const other of ['+2348030000401', '+2348030000402', '+2348030000403', '+2348030000404'])
        statuses.push((await create(other)).status);
      expect(statuses).toEqual([201, 201, 201, 429]);
      const refused = await create('+2348030000405');
      expect(await refused.json()).toMatchObject({
        status: 429,
        number: '+2348099000001',
        limit: 3,
        detail: expect.stringContaining('SESSION_PARTICIPANT_LIMIT'),
      });
      expect((await create('+2348030000406', OTHER_API_KEY)).status).toBe(201);
      const metrics = await (await fetch(`${broker.url}/metrics`)).text();
      expect(metrics).toMatch(/^broker_limit\{limit="session_participant_limit"\} 3$/m);
    });

    it('gives a freed slot to the next create (the lowest free of 1..SESSION_PARTICIPANT_LIMIT), then refuses the 4th again', async () => {
      const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
      const create = (other: string) =>
        fetch(`${broker.url}/v1/sessions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ channel: 'sms', participants: [{ number: '+2348099000003' }, { number: other }] }),
        });
      const ids: string[] = [];
      for (const other of ['+2348030000411', '+2348030000412', '+2348030000413']) {
        const res = await create(other);
        expect(res.status).toBe(201);
        ids.push(((await res.json()) as { id: string }).id);
      }
      const slots = () =>
        broker.app
          .get(DataSource)
          .query(
            `SELECT shared_slot AS slot FROM session_participants WHERE number = '+2348099000003' AND active ORDER BY shared_slot`,
          ) as Promise<Array<{ slot: number }>>;
      expect((await slots()).map((r) => r.slot)).toEqual([1, 2, 3]);
      // The second session ends: slot 2 is free, below the limit again by one.
      const closed = await fetch(`${broker.url}/v1/sessions/${ids[1]}`, { method: 'DELETE', headers });
      expect(closed.status).toBe(200);
      expect((await create('+2348030000414')).status).toBe(201);
      expect((await slots()).map((r) => r.slot)).toEqual([1, 2, 3]);
      expect((await create('+2348030000415')).status).toBe(429);
    });
  });

  describe('fair use: the participant limit under concurrent creates', () => {
    it('lets exactly SESSION_PARTICIPANT_LIMIT (3) of 12 concurrent creates for one person through, the rest 429 saying why', async () => {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          fetch(`${broker.url}/v1/sessions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              channel: 'sms',
              participants: [{ number: '+2348099000002' }, { number: `+23480300007${String(i).padStart(2, '0')}` }],
            }),
          }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> })),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([...Array(3).fill(201), ...Array(9).fill(429)]);
      for (const refused of answers.filter((a) => a.status === 429))
        expect(refused.body).toMatchObject({ type: '/problems/participant-limit', number: '+2348099000002', limit: 3 });
      const active = await fetch(`${broker.url}/v1/sessions?status=active&limit=100`, { headers: { authorization: `Bearer ${API_KEY}` } });
      const sessions = ((await active.json()) as { sessions: Array<{ participants: Array<{ number: string }> }> }).sessions;
      expect(sessions.filter((x) => x.participants.some((p) => p.number === '+2348099000002'))).toHaveLength(3);
    });
    it('holds under the worst interleaving too: 12 reservations at once, each trying a different number first', async () => {
      // Straight to the reservation, so no two pick the same number and meet on the pool rule's index: only the
      // limit's own index stands between them.
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const { numbers } = (await (await fetch(`${broker.url}/v1/admin/numbers?provider=primary`, { headers: admin })).json()) as {
        numbers: Array<{ id: string }>;
      };
      const { accounts } = (await (await fetch(`${broker.url}/v1/admin/accounts`, { headers: admin })).json()) as {
        accounts: Array<{ id: string; apiKeys: Array<{ prefix: string }> }>;
      };
      const accountId = accounts.find((a) => a.apiKeys.some((k) => API_KEY.startsWith(k.prefix)))!.id;
      const reservations = broker.app.get(SessionReservationRepository);
      const reserve = (i: number) => {
        const participants: [string, string] = ['+2348099000004', `+23480300009${String(i).padStart(2, '0')}`];
        return reservations.reserve({
          sessionId: randomUUID(),
          accountId,
          provider: 'primary',
          channels: ['sms'],
          sortedNumbers: [...participants].sort(),
          participants,
          loadOrder: [...numbers.slice(i % numbers.length), ...numbers.slice(0, i % numbers.length)].map((n) => n.id),
          ttlSeconds: 600,
          callbackUrl: null,
          metadata: {},
          idempotencyKey: null,
          participantLimit: 3,
          quarantineSeconds: 86_400,
          now: new Date(),
        });
      };
      // Each round runs the ones still undecided at once; a unique violation is the limit's index refusing a second
      // holder of one slot (SessionAllocator retries those), so the next round tries them again.
      const results: Array<Awaited<ReturnType<typeof reserve>>> = [];
      let pending = Array.from({ length: 12 }, (_, i) => i);
      for (let round = 0; round < 12 && pending.length > 0; round++) {
        const settled = await Promise.allSettled(pending.map(reserve));
        const next: number[] = [];
        settled.forEach((outcome, at) => {
          if (outcome.status === 'fulfilled') results.push(outcome.value);
          else {
            expect((outcome.reason as { driverError?: { code?: string } }).driverError?.code).toBe('23505');
            next.push(pending[at]);
          }
        });
        pending = next;
      }
      expect(pending).toEqual([]);
      expect(results.filter((r) => r.reserved)).toHaveLength(3);
      for (const refused of results.filter((r) => !r.reserved))
        expect(refused).toEqual({ reserved: null, overLimit: { number: '+2348099000004', held: 3 }, quarantined: 0 });
      for (const r of results) if (r.reserved) await reservations.release(r.reserved.id);
    });
  });

  describe('fair use: numbers dedicated to an account', () => {
    let small: BrokerHarness;

    beforeAll(async () => {
      // Two numbers per provider and a limit an operator raised: one account can take every shared number a person has.
      small = await startBroker({ ...AUTH_ENV, SIM_SEED_NUMBERS: '2', SESSION_PARTICIPANT_LIMIT: '10' });
    }, 60_000);
    afterAll(() => small?.close());

    it('keeps a person reachable for account A on its dedicated number while account B holds every shared number for them', async () => {
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
      const create = (key: string, other: string) =>
        fetch(`${small.url}/v1/sessions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ channel: 'sms', participants: [{ number: '+2348099000003' }, { number: other }] }),
        });
      const { accounts } = (await (await fetch(`${small.url}/v1/admin/accounts`, { headers: admin })).json()) as {
        accounts: Array<{ id: string; apiKeys: Array<{ prefix: string }> }>;
      };
      const accountA = accounts.find((a) => a.apiKeys.some((k) => API_KEY.startsWith(k.prefix)))!;
      const added = await fetch(`${small.url}/v1/admin/numbers`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ provider: 'primary', number: '+2349010009903' }),
      });
      const dedicated = (await added.json()) as { id: string };
      const assigned = await fetch(`${small.url}/v1/admin/numbers/${dedicated.id}/account`, {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ accountId: accountA.id }),
      });
      expect(assigned.status).toBe(200);

      // B (the other key) takes the four shared numbers for this person; a fifth finds none, A's is not among them.
      const heldByB = [];
      for (let i = 0; i < 4; i++) {
        const res = await create(OTHER_API_KEY, `+23480300008${i}1`);
        expect(res.status).toBe(201);
        heldByB.push(((await res.json()) as { proxyNumber: string }).proxyNumber);
      }
      expect(heldByB).not.toContain('+2349010009903');
      const lockedOut = await create(OTHER_API_KEY, '+2348030000851');
      expect(lockedOut.status).toBe(503);
      expect(await lockedOut.json()).toMatchObject({ type: '/problems/pool-exhausted' });

      // A still reaches the person, on its own number.
      const own = await create(API_KEY, '+2348030000861');
      expect(own.status).toBe(201);
      expect(await own.json()).toMatchObject({ provider: 'primary', proxyNumber: '+2349010009903' });
    });
  });

  describe('rate limits per API key', () => {
    let limited: BrokerHarness;

    beforeAll(async () => {
      // Slow refill, so the test does not depend on how fast this machine is.
      limited = await startBroker({
        ...AUTH_ENV,
        RATE_LIMIT_CREATES_PER_SECOND: '0.01',
        RATE_LIMIT_CREATES_BURST: '3',
        RATE_LIMIT_READS_PER_SECOND: '0.01',
        RATE_LIMIT_READS_BURST: '5',
        RATE_LIMIT_AUTH_FAILURES_PER_SECOND: '0.01',
        RATE_LIMIT_AUTH_FAILURES_BURST: '20',
      });
    }, 60_000);
    afterAll(() => limited?.close());

    it('refuses creates beyond the burst with 429 and Retry-After, counts reads apart, and keys apart', async () => {
      const post = (key: string, n: number) =>
        fetch(`${limited.url}/v1/sessions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ channel: 'sms', participants: [{ number: `+23480300006${n}1` }, { number: `+23480300006${n}2` }] }),
        });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await post(API_KEY, i)).status);
      expect(statuses).toEqual([201, 201, 201, 429]);
      const refused = await post(API_KEY, 5);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ status: 429, type: '/problems/rate-limited' });

      const reads = [];
      for (let i = 0; i < 6; i++)
        reads.push((await fetch(`${limited.url}/v1/sessions?limit=1`, { headers: { authorization: `Bearer ${API_KEY}` } })).status);
      expect(reads).toEqual([200, 200, 200, 200, 200, 429]);
      expect((await post(OTHER_API_KEY, 6)).status).toBe(201);

      const metrics = await (await fetch(`${limited.url}/metrics`)).text();
      expect(metrics).toMatch(/^broker_limit\{limit="rate_limit_creates_burst"\} 3$/m);
      expect(metrics).toMatch(/^broker_limit_refusals_total\{limit="rate_limit_creates"\} 2$/m);
    });

    it('throttles wrong API keys per client address: 429 with Retry-After once the burst is spent, a right key from elsewhere unaffected', async () => {
      const statuses = [];
      for (let i = 0; i < 30; i++) statuses.push((await getFrom(limited.url, '127.0.0.1', `sk_wrong_${i}_aaaaaaaaaaaaaaaa`)).status);
      expect(statuses).toEqual([...Array(20).fill(401), ...Array(10).fill(429)]);
      const refused = await getFrom(limited.url, '127.0.0.1', 'sk_wrong_again_aaaaaaaaaaaaaaaa');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(JSON.parse(refused.body)).toMatchObject({
        type: '/problems/rate-limited',
        detail: expect.stringContaining('RATE_LIMIT_AUTH_FAILURES_BURST'),
      });
      // A wrong admin token from that address is refused the same way; the right key from another address is not.
      expect((await getFrom(limited.url, '127.0.0.1', 'wrong-admin-token', '/v1/admin/accounts')).status).toBe(429);
      expect((await getFrom(limited.url, '127.0.0.2', OTHER_API_KEY)).status).toBe(200);
      expect((await getFrom(limited.url, '127.0.0.2', 'sk_one_wrong_key_aaaaaaaaaaaaaaaa')).status).toBe(401);

      const metrics = await (await fetch(`${limited.url}/metrics`)).text();
      expect(metrics).toMatch(/^broker_limit\{limit="rate_limit_auth_failures_burst"\} 20$/m);
      expect(metrics).toMatch(/^broker_limit_refusals_total\{limit="rate_limit_auth_failures"\} 12$/m);
    });
  });

  describe('SSE streams', () => {
    it('caps streams per client address (429) and in total (503), shows both in /metrics, and frees a slot when a client goes', async () => {
      const first = await openStream(port, '127.0.0.1');
      const second = await openStream(port, '127.0.0.1');
      expect([first.status, second.status]).toEqual([200, 200]);
      const third = await openStream(port, '127.0.0.1');
      expect(third.status).toBe(429);
      expect(JSON.parse(third.body)).toMatchObject({ status: 429, detail: expect.stringContaining('SSE_MAX_STREAMS_PER_CLIENT') });

      const elsewhere = await openStream(port, '127.0.0.2');
      expect(elsewhere.status).toBe(200);
      const beyond = await openStream(port, '127.0.0.3');
      expect(beyond.status).toBe(503);
      expect(beyond.res.headers['retry-after']).toBeDefined();

      const metrics = await (await fetch(`${broker.url}/metrics`)).text();
      expect(metrics).toMatch(/^broker_sse_streams_open 3$/m);
      expect(metrics).toMatch(/^broker_limit\{limit="sse_max_streams"\} 3$/m);
      expect(metrics).toMatch(/^broker_limit\{limit="sse_max_streams_per_client"\} 2$/m);
      expect(metrics).toMatch(/^broker_limit_refusals_total\{limit="sse_max_streams"\} 1$/m);

      first.req.destroy();
      await eventually(async () => (await openStream(port, '127.0.0.3').then((s) => (s.req.destroy(), s.status))) === 200, 50);
      second.req.destroy();
      elsewhere.req.destroy();
    });
  });
});

describe('the broker as a process', () => {
  let db: TestDatabase;
  let sim: SimulatorHarness;
  let running: RunningProcess | undefined;

  beforeAll(async () => {
    buildOnce();
    db = await createTestDatabase();
    sim = await startSimulator();
  }, 240_000);

  afterEach(async () => {
    if (running && running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    running = undefined;
  });

  afterAll(async () => {
    await sim?.app.close();
    await db?.drop();
  });

  function env(port: number): Record<string, string> {
    return {
      DATABASE_URL: db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      PROVIDERS: `primary=sim:${sim.url}`,
      SIM_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      BROKER_API_KEY: API_KEY,
      LOG_LEVEL: 'warn',
    };
  }

  it('refuses to start a sim provider without SIM_WEBHOOK_SECRET, in one line naming it', async () => {
    running = startProcess([MAIN], { ...env(await freePort()), SIM_WEBHOOK_SECRET: '' });
    expect(await running.exited).toMatchObject({ code: 1 });
    expect(running.output().trim()).toBe(
      'session-broker: cannot start: invalid configuration: SIM_WEBHOOK_SECRET must be set when PROVIDERS names a sim provider',
    );
  }, 30_000);

  it('keeps its memory while 200 unauthenticated clients each announce 1 MB and stall 100 bytes short', async () => {
    const port = await freePort();
    running = startProcess([MAIN], env(port));
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200);
    const pid = running.child.pid!;
    const before = await rssBytes(pid);
    const refused = () => refusedCreates(port);
    const refusedBefore = await refused();

    const clients = Array.from({ length: 200 }, () => slowPost(port, '/v1/sessions', {}, 1_000_000, 999_900));
    const answers = await Promise.all(clients.map((c) => c.answer));
    const after = await rssBytes(pid);
    clients.forEach((c) => c.socket.destroy());

    // Every connection was ended by the broker, refused from its headers: none is left to hold memory. Counted
    // where the broker answers (its own request count), since a client still writing when the broker closes may
    // see a reset instead of the 401 (99 to 200 of 200 seen by clients on a loaded machine, 31 once): whatever
    // a client did read is the 401.
    expect(answers.filter((a) => a !== '' && !/^HTTP\/1\.1 401 /.test(a))).toEqual([]);
    await eventually(async () => (await refused()) - refusedBefore >= 200, 100);
    expect((await refused()) - refusedBefore).toBe(200);
    // Buffering the bodies would take 200 MB; allow the ordinary noise of a busy process.
    expect(after - before).toBeLessThan(40 * 1024 * 1024);
    console.log(
      `slow-body probe: RSS ${(before / 2 ** 20).toFixed(0)} MB before, ${(after / 2 ** 20).toFixed(0)} MB after 200 × 1 MB stalled uploads`,
    );
  }, 120_000);
});
