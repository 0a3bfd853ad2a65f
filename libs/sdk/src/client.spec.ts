/**
 * The client's request rules against a small loopback server that answers as told: the headers every
 * call carries, Retry-After against the caller's cap (both sides of it), per-call retries and timeout,
 * and the request id on each kind of error.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { BrokerClient, DEFAULT_TIMEOUT_MS } from './client';
import { BrokerServerError, BrokerTimeoutError, parseRetryAfter } from './errors';
import { SDK_VERSION } from './version';

type Answer = (res: ServerResponse, attempt: number) => void;

async function withServer(answer: Answer, run: (url: string, seen: IncomingHttpHeaders[]) => Promise<void>): Promise<void> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => answer(res, seen.length));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }
}

const ok: Answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"callbackUrl":null}');
const unavailable =
  (retryAfter: string): Answer =>
  (res, attempt) =>
    attempt === 1
      ? res
          .writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': retryAfter })
          .end('{"type":"about:blank","title":"Service Unavailable","status":503}')
      : ok(res, attempt);

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

describe('BrokerClient requests', () => {
  it('names the SDK and its version in the User-Agent, after the caller’s own, and sends a request id', async () => {
    await withServer(ok, async (url, seen) => {
      await new BrokerClient({ baseUrl: url, apiKey: 'k' }).getCallbackUrl();
      await new BrokerClient({ baseUrl: url, apiKey: 'k', userAgent: 'rides/2.1' }).getCallbackUrl();
      expect(seen[0]['user-agent']).toBe(`session-broker-sdk/${SDK_VERSION} node/${process.versions.node}`);
      expect(seen[1]['user-agent']).toBe(`rides/2.1 session-broker-sdk/${SDK_VERSION} node/${process.versions.node}`);
      expect(seen[0]['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen[0]['x-request-id']).not.toBe(seen[1]['x-request-id']);
    });
  });

  it('states the version its package.json states', () => {
    const pkg = JSON.parse(readFileSync(join(process.cwd(), 'libs/sdk/package.json'), 'utf8')) as { version: string };
    expect(SDK_VERSION).toBe(pkg.version);
  });

  it('waits out a Retry-After up to the cap, with the same request id', async () => {
    await withServer(unavailable('1'), async (url, seen) => {
      const client = new BrokerClient({ baseUrl: url, apiKey: 'k', maxRetryAfterMs: 1_000 });
      expect(await client.getCallbackUrl()).toEqual({ callbackUrl: null });
      expect(seen).toHaveLength(2);
      expect(seen[1]['x-request-id']).toBe(seen[0]['x-request-id']);
    });
  });

  it('throws at once a 503 that asks for a longer wait than the cap, with retryAfterMs and requestId', async () => {
    await withServer(unavailable('1'), async (url, seen) => {
      const client = new BrokerClient({ baseUrl: url, apiKey: 'k', maxRetryAfterMs: 999 });
      const error = await failure(() => client.getCallbackUrl());
      expect(error).toBeInstanceOf(BrokerServerError);
      expect(error).toMatchObject({ status: 503, retryAfterMs: 1_000, requestId: seen[0]['x-request-id'] });
      expect(seen).toHaveLength(1);
    });
  });

  it('takes retries per call: 0 is one attempt', async () => {
    await withServer(unavailable('0'), async (url, seen) => {
      const client = new BrokerClient({ baseUrl: url, apiKey: 'k', retries: 3 });
      await expect(client.getCallbackUrl({ retries: 0 })).rejects.toBeInstanceOf(BrokerServerError);
      expect(seen).toHaveLength(1);
    });
  });

  it('takes timeoutMs per call, and the timeout error carries the request id', async () => {
    await withServer(
      () => undefined,
      async (url, seen) => {
        const client = new BrokerClient({ baseUrl: url, apiKey: 'k', retries: 0 });
        const error = await failure(() => client.getCallbackUrl({ timeoutMs: 1_000 }));
        expect(error).toBeInstanceOf(BrokerTimeoutError);
        expect(error).toMatchObject({ timeoutMs: 1_000, requestId: seen[0]['x-request-id'] });
      },
    );
  });

  it('waits by default longer than a create can take on the broker (5 s per provider, two providers)', () => {
    expect(DEFAULT_TIMEOUT_MS).toBeGreaterThan(5_000 * 2);
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and an HTTP date, and nothing else', () => {
    const now = Date.parse('2026-07-15T12:00:00Z');
    expect(parseRetryAfter('5', now)).toBe(5_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Wed, 15 Jul 2026 12:00:07 GMT', now)).toBe(7_000);
    expect(parseRetryAfter('Wed, 15 Jul 2026 11:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('BrokerClient.sendMessage', () => {
  const accepted: Answer = (res) =>
    res
      .writeHead(202, { 'content-type': 'application/json' })
      .end(
        '{"id":"i1","channel":"sms","from":"+2349010000001","to":"+2348030000001","status":"relayed","createdAt":"2031-01-01T00:00:00.000Z"}',
      );

  it('sends one Idempotency-Key and reuses it on every retry, so a retried send never sends twice', async () => {
    const answer: Answer = (res, attempt) =>
      attempt < 3 ? res.writeHead(503, { 'content-type': 'application/problem+json' }).end('{"status":503}') : accepted(res, attempt);
    await withServer(answer, async (url, seen) => {
      const client = new BrokerClient({ baseUrl: url, apiKey: 'k', retryDelayMs: 1 });
      const sent = await client.sendMessage('s1', { to: '+2348030000001', text: 'hi' });
      expect(seen).toHaveLength(3);
      const keys = seen.map((h) => h['idempotency-key']);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Set(keys)).toEqual(new Set([keys[0]]));
      expect(sent).toMatchObject({ id: 'i1', status: 'relayed', idempotencyKey: keys[0], replayed: false });
    });
  });

  it('sends the key it is given, and says when the broker replayed an earlier answer', async () => {
    const replayed: Answer = (res) =>
      res
        .writeHead(202, { 'content-type': 'application/json', 'idempotent-replayed': 'true' })
        .end(
          '{"id":"i1","channel":"sms","from":"+2349010000001","to":"+2348030000001","status":"relayed","createdAt":"2031-01-01T00:00:00.000Z"}',
        );
    await withServer(replayed, async (url, seen) => {
      const sent = await new BrokerClient({ baseUrl: url, apiKey: 'k' }).sendMessage(
        's1',
        { to: '+2348030000001', text: 'hi' },
        { idempotencyKey: 'ride-1-arrived' },
      );
      expect(seen[0]['idempotency-key']).toBe('ride-1-arrived');
      expect(sent).toMatchObject({ idempotencyKey: 'ride-1-arrived', replayed: true });
    });
  });
});

describe('BrokerClient retries only what a retry can fix', () => {
  /** The first answer is this problem, every later one a success. */
  const problemFirst =
    (status: number, slug: string | null): Answer =>
    (res, attempt) =>
      attempt === 1
        ? res
            .writeHead(status, { 'content-type': 'application/problem+json', 'retry-after': '0' })
            .end(JSON.stringify({ type: slug ? `/problems/${slug}` : 'about:blank', title: 'x', status, detail: 'x' }))
        : ok(res, attempt);

  it.each([
    [429, 'rate-limited'],
    [429, null],
    [503, 'providers-failed'],
    [503, 'reservation-expired'],
    [503, 'database-unavailable'],
    [500, 'internal-error'],
    [502, null],
  ])('retries %i %s: it may pass in a moment', async (status, slug) => {
    await withServer(problemFirst(status, slug), async (url, seen) => {
      await new BrokerClient({ baseUrl: url, apiKey: 'k', retryDelayMs: 1 }).getCallbackUrl();
      expect(seen).toHaveLength(2);
    });
  });

  it.each([
    [429, 'participant-limit'],
    [429, 'too-many-streams'],
    [503, 'pool-exhausted'],
    [503, 'no-provider'],
    [422, 'provider-refused'],
    [409, 'idempotency-key-reused'],
  ])('does not retry %i %s: the same request would get the same answer', async (status, slug) => {
    await withServer(problemFirst(status, slug), async (url, seen) => {
      const error = await failure(() => new BrokerClient({ baseUrl: url, apiKey: 'k', retryDelayMs: 1 }).getCallbackUrl());
      expect(error).toMatchObject({ status, type: `/problems/${slug}`, retryable: false });
      expect(seen).toHaveLength(1);
    });
  });
});
