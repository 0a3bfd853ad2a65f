/**
 * The SDK as a customer's backend uses it, against the running broker and simulator: sessions,
 * pagination, typed problems, the health stream, and retries that keep their Idempotency-Key
 * (through a small local proxy that fails the first attempts).
 */
import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BrokerApiError,
  BrokerAuthError,
  BrokerClient,
  BrokerNetworkError,
  BrokerNotFoundError,
  BrokerServerError,
  BrokerTimeoutError,
  BrokerValidationError,
  WebhookVerificationError,
  verifyWebhook,
  type CpaasHealthEvent,
  type CreateSessionInput,
} from '@app/sdk';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually, freePort } from './support/processes';
import { setFault } from './support/sim-control';

// Generous bounds for a loaded 2-core CI machine; nothing here asserts a duration.
jest.setTimeout(60_000);

const API_KEY = 'sdk-e2e-api-key-0001';
const ADMIN_TOKEN = 'sdk-e2e-admin-token-0001';

let nextNumber = 0;
/** Fresh participants per session, so no test runs into the pool rule. */
function sessionInput(overrides: Partial<CreateSessionInput> = {}): CreateSessionInput {
  const a = `+23480300${String(10000 + nextNumber++).padStart(5, '0')}`;
  const b = `+23480300${String(10000 + nextNumber++).padStart(5, '0')}`;
  return { channel: 'sms', participants: [{ number: a }, { number: b }], ...overrides };
}

interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** A loopback HTTP server: `handle` answers, or returns false to forward the request to the broker. */
async function startProxy(
  target: string,
  handle: (seen: SeenRequest, index: number, res: import('node:http').ServerResponse) => boolean,
): Promise<{ url: string; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
      seen.push(request);
      if (handle(request, seen.length, res)) return;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host') headers.set(name, value);
      fetch(`${target}${request.url}`, { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined })
        .then(async (upstream) => {
          const body = Buffer.from(await upstream.arrayBuffer());
          const out: Record<string, string> = {};
          upstream.headers.forEach((value, name) => {
            if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection') out[name] = value;
          });
          res.writeHead(upstream.status, out).end(body);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

function unavailable(res: import('node:http').ServerResponse): true {
  res
    .writeHead(503, { 'content-type': 'application/problem+json' })
    .end(JSON.stringify({ type: '/problems/unavailable', title: 'Service Unavailable', status: 503, detail: 'try again' }));
  return true;
}

async function caught(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('SDK against the running broker', () => {
  let broker: BrokerHarness;
  let client: BrokerClient;

  beforeAll(async () => {
    // Webhooks may go to this machine's loopback receiver in this test.
    broker = await startBroker({
      BROKER_API_KEY: API_KEY,
      ADMIN_TOKEN,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '100',
    });
    client = new BrokerClient({ baseUrl: broker.url, apiKey: API_KEY, timeoutMs: 10_000 });
  });
  afterAll(() => broker?.close());

  it('creates a session with an automatic Idempotency-Key, reads it and closes it', async () => {
    const input = sessionInput({ metadata: { ride: 'r-1' } });
    const created = await client.createSession(input);
    expect(created).toMatchObject({
      channel: 'sms',
      status: 'active',
      provider: 'primary',
      participants: input.participants,
      metadata: { ride: 'r-1' },
    });
    expect(created.proxyNumber).toMatch(/^\+[1-9]\d{6,14}$/);
    expect(created.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.replayed).toBe(false);

    const read = await client.getSession(created.id);
    expect(read).toMatchObject({ id: created.id, status: 'active', proxyNumber: created.proxyNumber });

    const closed = await client.closeSession(created.id);
    expect(closed).toMatchObject({ id: created.id, status: 'closed' });
    expect((await client.getSession(created.id)).status).toBe('closed');
    expect(await client.listInteractions(created.id)).toEqual([]);
  });

  it('replays a create sent again with the same key, and refuses that key with another body (422)', async () => {
    const input = sessionInput();
    const first = await client.createSession(input, { idempotencyKey: 'sdk-e2e-replay-1' });
    const again = await client.createSession(input, { idempotencyKey: 'sdk-e2e-replay-1' });
    expect(again.id).toBe(first.id);
    expect(again.replayed).toBe(true);

    const error = await caught(() => client.createSession(sessionInput(), { idempotencyKey: 'sdk-e2e-replay-1' }));
    expect(error).toBeInstanceOf(BrokerValidationError);
    expect(error).toMatchObject({ status: 422, kind: 'validation' });
  });

  it('turns problems into typed errors: validation with its fields, auth, not found', async () => {
    const invalid = await caught(() =>
      client.createSession({ channel: 'sms', participants: [{ number: '12345' }, { number: '+2348030000001' }] }),
    );
    expect(invalid).toBeInstanceOf(BrokerValidationError);
    const problem = invalid as BrokerValidationError;
    expect(problem).toMatchObject({ status: 400, kind: 'validation', title: expect.any(String), type: expect.any(String) });
    expect(problem.errors).toContainEqual({ field: 'participants[0].number', message: expect.stringContaining('E.164') });
    expect(problem.detail).toContain('participants[0].number');

    const stranger = new BrokerClient({ baseUrl: broker.url, apiKey: 'not-a-key' });
    const unauthorized = await caught(() => stranger.getSession('6d7c1a52-5a2e-4f55-9d1c-1b6a4f0e9d11'));
    expect(unauthorized).toBeInstanceOf(BrokerAuthError);
    expect(unauthorized).toMatchObject({ status: 401, kind: 'unauthorized' });

    const missing = await caught(() => client.getSession('6d7c1a52-5a2e-4f55-9d1c-1b6a4f0e9d11'));
    expect(missing).toBeInstanceOf(BrokerNotFoundError);
    expect(missing).toBeInstanceOf(BrokerApiError);
    expect(missing).toMatchObject({ status: 404, kind: 'not_found' });
  });

  it('lists every session across cursor pages', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.createSession(sessionInput())).id);

    const pages = [];
    for await (const page of client.listSessionPages({ status: 'active', limit: 2 })) pages.push(page);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.slice(0, -1).every((page) => page.sessions.length === 2 && page.nextCursor)).toBe(true);
    expect(pages[pages.length - 1].nextCursor).toBeNull();

    const listed: string[] = [];
    for await (const session of client.listSessions({ status: 'active', limit: 2 })) listed.push(session.id);
    expect(listed).toEqual(expect.arrayContaining(ids));
    expect(new Set(listed).size).toBe(listed.length);

    // Leaving the loop early asks for no further page: the 3rd session is on the 2nd page, and a 3rd page exists.
    const asked: string[] = [];
    const counting = new BrokerClient({
      baseUrl: broker.url,
      apiKey: API_KEY,
      fetch: (input, init) => (asked.push(String(input)), fetch(input, init)),
    });
    let taken = 0;
    for await (const _session of counting.listSessions({ limit: 2 })) if (++taken === 3) break;
    expect(taken).toBe(3);
    expect(asked).toHaveLength(2);
  });

  it('reads the CPaaS health, and streams it: snapshot first, then the change an operator makes', async () => {
    const health = await client.getCpaasHealth();
    expect(health.providers.map((p) => [p.name, p.state])).toEqual([
      ['primary', 'CLOSED'],
      ['failover', 'CLOSED'],
    ]);
    expect(Date.parse(health.timestamp)).not.toBeNaN();

    const stream = client.watchCpaasHealth();
    const first = await stream.next();
    expect(first.done).toBe(false);
    const snapshot = first.value as CpaasHealthEvent;
    expect(snapshot.type).toBe('snapshot');
    if (snapshot.type === 'snapshot') expect(snapshot.data.providers).toHaveLength(2);

    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const disabled = await fetch(`${broker.url}/v1/admin/providers/failover/disable`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ reason: 'sdk stream test' }),
    });
    expect(disabled.status).toBe(200);
    try {
      let seen: CpaasHealthEvent | undefined;
      for (let i = 0; i < 20 && !seen; i++) {
        const next = await stream.next();
        if (next.done) break;
        if (next.value.type === 'provider' && next.value.data.name === 'failover' && next.value.data.disabled) seen = next.value;
      }
      expect(seen).toBeDefined();
    } finally {
      await stream.return();
      await fetch(`${broker.url}/v1/admin/providers/failover/enable`, { method: 'POST', headers: admin });
    }
    expect((await stream.next()).done).toBe(true);
  });

  it('stops the health stream when its AbortSignal aborts', async () => {
    const stop = new AbortController();
    const types: string[] = [];
    for await (const event of client.watchCpaasHealth({ signal: stop.signal })) {
      types.push(event.type);
      stop.abort();
    }
    expect(types).toEqual(['snapshot']);
  });

  it('verifies the session.created webhook the broker signs and delivers, and refuses it altered', async () => {
    const received: Array<{ headers: IncomingHttpHeaders; body: Buffer }> = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    try {
      const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/broker-events`;
      const registered = await fetch(`${broker.url}/v1/account/callback-url`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ callbackUrl }),
      });
      expect(registered.status).toBe(200);
      const { webhookSecret } = (await registered.json()) as { webhookSecret: string };
      expect(webhookSecret).toMatch(/^whsec_/);

      const session = await client.createSession(sessionInput());
      const created = (): { headers: IncomingHttpHeaders; body: Buffer } | undefined =>
        received.find((r) => r.body.toString().includes(session.id) && r.body.toString().includes('session.created'));
      await eventually(() => Promise.resolve(created() !== undefined), 100);
      const delivery = created()!;

      const verified = verifyWebhook<{ type: string }>({ payload: delivery.body, headers: delivery.headers, secret: webhookSecret });
      expect(verified.id).toBe(delivery.headers['webhook-id']);
      expect(verified.body.type).toBe('session.created');
      expect(JSON.stringify(verified.body)).toContain(session.id);

      const altered = Buffer.from(delivery.body.toString().replace(session.id, '00000000-0000-4000-8000-000000000000'));
      expect(() => verifyWebhook({ payload: altered, headers: delivery.headers, secret: webhookSecret })).toThrow(WebhookVerificationError);
      expect(() => verifyWebhook({ payload: delivery.body, headers: delivery.headers, secret: 'whsec_bm90IHRoZSBrZXk=' })).toThrow(
        WebhookVerificationError,
      );
    } finally {
      await fetch(`${broker.url}/v1/account/callback-url`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ callbackUrl: null }),
      });
      receiver.closeAllConnections();
      await new Promise<void>((done) => receiver.close(() => done()));
    }
  });

  describe('retries', () => {
    it('retries a create after 5xx answers with the same Idempotency-Key, and makes one session', async () => {
      // The broker itself answers 503 (every provider failed) to the first two attempts; the providers are back before the third.
      const sent: Array<{ status: number; key: string | null }> = [];
      const both = (mode: 'ok' | 'error') => Promise.all(['primary', 'failover'].map((name) => setFault(broker.sim.url, name, { mode })));
      const viaBroker = new BrokerClient({
        baseUrl: broker.url,
        apiKey: API_KEY,
        retries: 3,
        retryDelayMs: 10,
        fetch: async (input, init) => {
          if (sent.length === 2) await both('ok');
          const res = await fetch(input, init);
          sent.push({ status: res.status, key: new Headers(init?.headers).get('idempotency-key') });
          return res;
        },
      });
      await both('error');
      try {
        const input = sessionInput();
        const created = await viaBroker.createSession(input);
        expect(sent).toEqual([
          { status: 503, key: created.idempotencyKey },
          { status: 503, key: created.idempotencyKey },
          { status: 201, key: created.idempotencyKey },
        ]);
        expect(created.replayed).toBe(false);

        // The broker holds one session for that key: the same create once more replays it.
        const replay = await client.createSession(input, { idempotencyKey: created.idempotencyKey });
        expect(replay).toMatchObject({ id: created.id, replayed: true });
        expect((await client.getSession(created.id)).status).toBe('active');
      } finally {
        await both('ok');
      }
    });

    it('does not retry a 503 that only a change ends: no proxy number free', async () => {
      const db = broker.app.get(DataSource);
      let attempts = 0;
      const counting = new BrokerClient({
        baseUrl: broker.url,
        apiKey: API_KEY,
        retries: 3,
        retryDelayMs: 10,
        fetch: (input, init) => {
          attempts++;
          return fetch(input, init);
        },
      });
      await db.query('UPDATE proxy_numbers SET enabled = false');
      try {
        const error = await caught(() => counting.createSession(sessionInput()));
        expect(error).toBeInstanceOf(BrokerServerError);
        expect(error).toMatchObject({ status: 503, type: '/problems/pool-exhausted', retryable: false });
        expect(attempts).toBe(1);
      } finally {
        await db.query('UPDATE proxy_numbers SET enabled = true');
      }
    });

    it('gives up after its retries with the last 5xx as a typed error', async () => {
      const proxy = await startProxy(broker.url, (_seen, _index, res) => unavailable(res));
      try {
        const viaProxy = new BrokerClient({ baseUrl: proxy.url, apiKey: API_KEY, retries: 2, retryDelayMs: 10 });
        const error = await caught(() => viaProxy.getCpaasHealth());
        expect(error).toBeInstanceOf(BrokerServerError);
        expect(error).toMatchObject({ status: 503, kind: 'unavailable', detail: 'try again' });
        expect(proxy.seen).toHaveLength(3);
      } finally {
        await proxy.close();
      }
    });

    it('never retries a 4xx', async () => {
      const proxy = await startProxy(broker.url, () => false);
      try {
        const viaProxy = new BrokerClient({ baseUrl: proxy.url, apiKey: API_KEY, retries: 3, retryDelayMs: 10 });
        const error = await caught(() => viaProxy.createSession({ channel: 'sms', participants: [{ number: 'x' }, { number: 'y' }] }));
        expect(error).toBeInstanceOf(BrokerValidationError);
        expect(proxy.seen).toHaveLength(1);
      } finally {
        await proxy.close();
      }
    });

    it('retries a dropped connection, then reports the broker unreachable', async () => {
      const proxy = await startProxy(broker.url, (_seen, index, res) => {
        if (index > 1) return false;
        res.socket?.destroy();
        return true;
      });
      try {
        const viaProxy = new BrokerClient({ baseUrl: proxy.url, apiKey: API_KEY, retries: 2, retryDelayMs: 10 });
        expect((await viaProxy.getCpaasHealth()).providers).toHaveLength(2);
        expect(proxy.seen).toHaveLength(2);
      } finally {
        await proxy.close();
      }

      const nowhere = new BrokerClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, apiKey: API_KEY, retries: 1, retryDelayMs: 10 });
      const error = await caught(() => nowhere.createSession(sessionInput()));
      expect(error).toBeInstanceOf(BrokerNetworkError);
      expect((error as Error).message).toContain('ECONNREFUSED');
    });

    it('times out a call that gets no answer, per attempt', async () => {
      const silent = await startProxy(broker.url, () => true);
      try {
        const impatient = new BrokerClient({ baseUrl: silent.url, apiKey: API_KEY, timeoutMs: 200, retries: 1, retryDelayMs: 10 });
        const error = await caught(() => impatient.getSession('6d7c1a52-5a2e-4f55-9d1c-1b6a4f0e9d11'));
        expect(error).toBeInstanceOf(BrokerTimeoutError);
        expect(silent.seen).toHaveLength(2);

        const stop = new AbortController();
        const pending = caught(() => impatient.getCpaasHealth({ signal: stop.signal, timeoutMs: 60_000 }));
        stop.abort(new Error('caller gave up'));
        expect(await pending).toEqual(new Error('caller gave up'));
      } finally {
        await silent.close();
      }
    });
  });
});
