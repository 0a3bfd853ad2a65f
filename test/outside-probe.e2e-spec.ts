/**
 * The findings of the outside security probe of issue #29, each reproduced against the running broker
 * as the probe sent it, over HTTP only, and each answered as the fix says. (Webhook endpoints per account
 * are in notifications.e2e-spec.ts, the compose file and example credentials in start.e2e-spec.ts.)
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, OTHER_API_KEY, createSession, freshPair, sessionBody } from './support/api-client';
import { simInbound } from './support/sim-control';
import { createTestDatabase } from '@app/testing';
import { startBroker, startSimulator, type BrokerHarness } from './support/broker-harness';

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** GET `path` with `Authorization: Bearer <key>` from `localAddress`, with `headers` besides. */
function getFrom(url: string, localAddress: string, key: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { localAddress, headers: { authorization: `Bearer ${key}`, ...headers } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The failure throttle at its defaults' shape, refilling slowly enough that no token comes back during a test. */
const SLOW_FAILURE_REFILL = { RATE_LIMIT_AUTH_FAILURES_PER_SECOND: '0.01', RATE_LIMIT_AUTH_FAILURES_BURST: '20' };

describe('issue #29: what an outside probe found', () => {
  describe('item 2: wrong credentials throttle the failures, never a valid key or token', () => {
    let broker: BrokerHarness;
    let proxied: BrokerHarness;

    beforeAll(async () => {
      broker = await startBroker({ ...AUTH_ENV, ...SLOW_FAILURE_REFILL });
      // Behind a proxy on 127.0.0.1: the client is the address it forwards.
      proxied = await startBroker({ ...AUTH_ENV, ...SLOW_FAILURE_REFILL, TRUST_PROXY: '127.0.0.1' }, { sim: broker.sim });
    }, 60_000);
    afterAll(async () => {
      await proxied?.close();
      await broker?.close();
    });

    it('21 wrong bearer tokens from one address, then the right key and the admin token from it: both accepted', async () => {
      const statuses = [];
      for (let i = 0; i < 21; i++)
        statuses.push((await getFrom(broker.url, '127.0.0.3', `sk_wrong_${i}_aaaaaaaaaaaaaaaa`, '/v1/sessions')).status);
      expect(statuses).toEqual([...Array(20).fill(401), 429]);
      expect((await getFrom(broker.url, '127.0.0.3', API_KEY, '/v1/sessions?limit=1')).status).toBe(200);
      expect((await getFrom(broker.url, '127.0.0.3', ADMIN_TOKEN, '/v1/admin/accounts')).status).toBe(200);
      // The wrong ones stay throttled, with the time to wait.
      const refused = await getFrom(broker.url, '127.0.0.3', 'sk_wrong_again_aaaaaaaaaaaaaaaa', '/v1/sessions');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(JSON.parse(refused.body)).toMatchObject({ type: '/problems/rate-limited' });
      expect((await getFrom(broker.url, '127.0.0.3', 'wrong-admin-token-000000', '/v1/admin/accounts')).status).toBe(429);
    });

    it('once an address has spent its budget, a wrong key between each legitimate request refuses none of them', async () => {
      for (let i = 0; i < 20; i++) await getFrom(broker.url, '127.0.0.4', `sk_spent_${i}_aaaaaaaaaaaaaaaaaaaa`, '/v1/sessions');
      const legitimate = [];
      for (let i = 0; i < 15; i++) {
        await getFrom(broker.url, '127.0.0.4', `sk_noise_${i}_aaaaaaaaaaaaaaaaaaaa`, '/v1/sessions');
        legitimate.push((await getFrom(broker.url, '127.0.0.4', OTHER_API_KEY, '/v1/sessions?limit=1')).status);
      }
      expect(legitimate).toEqual(Array(15).fill(200));
    });

    it('without TRUST_PROXY a forwarded address is ignored: the connection is the client', async () => {
      for (let i = 0; i < 20; i++)
        await getFrom(broker.url, '127.0.0.5', `sk_wrong_${i}_bbbbbbbbbbbbbbbb`, '/v1/sessions', { 'x-forwarded-for': `198.51.100.${i}` });
      const next = await getFrom(broker.url, '127.0.0.5', 'sk_wrong_next_bbbbbbbbbbbbbbbb', '/v1/sessions', {
        'x-forwarded-for': '198.51.100.200',
      });
      expect(next.status).toBe(429);
    });

    it('behind a trusted proxy each client has its own budget: one anonymous client cannot lock out the others', async () => {
      const through = (client: string, key: string) =>
        getFrom(proxied.url, '127.0.0.1', key, '/v1/sessions', { 'x-forwarded-for': client });
      const attacker = [];
      for (let i = 0; i < 21; i++) attacker.push((await through('203.0.113.66', `sk_wrong_${i}_cccccccccccccccc`)).status);
      expect(attacker).toEqual([...Array(20).fill(401), 429]);
      // Another client behind the same proxy still gets a plain 401 for a typo, and its key works.
      expect((await through('203.0.113.7', 'sk_typo_cccccccccccccccccccc')).status).toBe(401);
      expect((await through('203.0.113.7', API_KEY)).status).toBe(200);
      // A forwarded address from a connection that is not the trusted proxy is not believed.
      const direct = [];
      for (let i = 0; i < 21; i++)
        direct.push(
          (
            await getFrom(proxied.url, '127.0.0.6', `sk_wrong_${i}_dddddddddddddddd`, '/v1/sessions', {
              'x-forwarded-for': `203.0.113.${100 + i}`,
            })
          ).status,
        );
      expect(direct).toEqual([...Array(20).fill(401), 429]);
    });
  });

  describe('item 11: query numbers as written, answers not cached, /metrics and /docs behind a token', () => {
    let broker: BrokerHarness;
    let guarded: BrokerHarness;
    const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

    beforeAll(async () => {
      broker = await startBroker(AUTH_ENV);
      guarded = await startBroker({ ...AUTH_ENV, METRICS_TOKEN }, { sim: broker.sim });
    }, 60_000);
    afterAll(async () => {
      await guarded?.close();
      await broker?.close();
    });

    const get = (url: string, path: string, key?: string) =>
      fetch(`${url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

    it.each(['0x10', '1e1', '+5', '%205', '5.0', '0b11'])(
      'refuses limit=%s with a 400 naming limit, on every paged list',
      async (limit) => {
        for (const [path, key] of [
          ['/v1/sessions', API_KEY],
          ['/v1/events', API_KEY],
          ['/v1/health/cpaas/history', undefined],
        ] as const) {
          const res = await get(broker.url, `${path}?limit=${limit}`, key);
          expect({ path, status: res.status }).toEqual({ path, status: 400 });
          expect(((await res.json()) as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toEqual(['limit']);
        }
        expect((await get(broker.url, '/v1/sessions?limit=16', API_KEY)).status).toBe(200);
      },
    );

    it('answers the API with Cache-Control: no-store, problems included', async () => {
      for (const [path, key, status] of [
        ['/v1/sessions', API_KEY, 200],
        ['/v1/sessions', 'sk_wrong_eeeeeeeeeeeeeeeeeeee', 401],
        ['/v1/sessions/00000000-0000-0000-0000-000000000000', API_KEY, 404],
        ['/v1/health/cpaas', undefined, 200],
        ['/health/ready', undefined, 200],
        ['/metrics', undefined, 200],
      ] as const) {
        const res = await get(broker.url, path, key);
        // Terminus answers the health routes with its own `no-cache, no-store, must-revalidate`.
        expect({ path, status: res.status, noStore: /(^|, )no-store(,|$)/.test(res.headers.get('cache-control') ?? '') }).toEqual({
          path,
          status,
          noStore: true,
        });
      }
    });

    it('with METRICS_TOKEN, /metrics and /docs answer only with it (401 problem otherwise); without it they stay open', async () => {
      for (const path of ['/metrics', '/docs', '/docs/openapi.json']) {
        const none = await get(guarded.url, path);
        expect({ path, status: none.status }).toEqual({ path, status: 401 });
        expect(none.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(none.headers.get('www-authenticate')).toBe('Bearer');
        expect((await get(guarded.url, path, 'metrics-token-wrong-0000000000')).status).toBe(401);
        expect((await get(guarded.url, path, API_KEY)).status).toBe(401);
        expect((await get(guarded.url, path, METRICS_TOKEN)).status).toBe(200);
        expect((await get(broker.url, path)).status).toBe(200);
      }
      // The API itself is untouched by it.
      expect((await get(guarded.url, '/v1/sessions', API_KEY)).status).toBe(200);
      expect((await get(guarded.url, '/v1/health/cpaas')).status).toBe(200);
    });
  });

  describe('item 10: interactions are paged, and each session relays at a bounded rate', () => {
    let broker: BrokerHarness;

    beforeAll(async () => {
      // 12 relays at once per session, then one every 100 s: no token comes back during the test.
      broker = await startBroker({ ...AUTH_ENV, RATE_LIMIT_SESSION_RELAYS_PER_SECOND: '0.01', RATE_LIMIT_SESSION_RELAYS_BURST: '12' });
    }, 60_000);
    afterAll(() => broker?.close());

    interface Page {
      interactions: Array<{ id: string; createdAt: string; from: string }>;
      nextCursor: string | null;
    }
    const page = async (id: string, query = ''): Promise<Page> => {
      const res = await fetch(`${broker.url}/v1/sessions/${id}/interactions${query}`, { headers: { authorization: `Bearer ${API_KEY}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as Page;
    };

    it('relays a burst of RATE_LIMIT_SESSION_RELAYS_BURST texts per session, refuses the rest, and shows it in /metrics', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, sessionBody([rider, driver])).expect(201)).body as {
        id: string;
        proxyNumber: string;
      };
      const answers = [];
      for (let i = 0; i < 15; i++)
        answers.push(
          (await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: session.proxyNumber, text: `spam ${i}` })).status,
        );
      expect(answers.slice(0, 12)).toEqual(Array(12).fill(200));
      // Not relayed and not recorded; the simulator's answer names the refusal (its adapter has no answer of its own).
      expect(answers.slice(12)).toEqual([429, 429, 429]);
      expect((await page(session.id, '?limit=200')).interactions).toHaveLength(12);

      // Another session's participants are not held back by it.
      const [other, otherDriver] = freshPair();
      const second = (await createSession(broker.url, sessionBody([other, otherDriver])).expect(201)).body as {
        id: string;
        proxyNumber: string;
      };
      expect(
        (await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: other, to: second.proxyNumber, text: 'hello' })).status,
      ).toBe(200);

      const metrics = await (await fetch(`${broker.url}/metrics`)).text();
      expect(metrics).toMatch(/^broker_limit\{limit="rate_limit_session_relays_burst"\} 12$/m);
      expect(metrics).toMatch(/^broker_limit_refusals_total\{limit="rate_limit_session_relays"\} 3$/m);
    });

    it('pages GET /v1/sessions/:id/interactions oldest first with limit and cursor, as the other lists', async () => {
      const [rider, driver] = freshPair();
      const session = (await createSession(broker.url, sessionBody([rider, driver])).expect(201)).body as {
        id: string;
        proxyNumber: string;
      };
      for (let i = 0; i < 7; i++)
        await simInbound(broker.sim.url, 'primary', {
          channel: 'sms',
          from: i % 2 ? driver : rider,
          to: session.proxyNumber,
          text: `m${i}`,
        });
      const first = await page(session.id);
      expect(first.interactions).toHaveLength(7);
      expect(first.nextCursor).toBeNull();

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const next: Page = await page(session.id, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(next.interactions.length).toBeLessThanOrEqual(3);
        seen.push(...next.interactions.map((i) => i.id));
        cursor = next.nextCursor;
        pages += 1;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(first.interactions.map((i) => i.id));

      for (const query of ['?limit=0', '?limit=201', '?limit=0x10', '?cursor=abc']) {
        const res = await fetch(`${broker.url}/v1/sessions/${session.id}/interactions${query}`, {
          headers: { authorization: `Bearer ${API_KEY}` },
        });
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
      }
    });
  });

  describe('item 5: BROKER_API_KEY is the list of the keys it makes: a key taken out of it stops working', () => {
    const KEEP = 'env-key-kept-0123456789abcdef';
    const DROP = 'env-key-dropped-0123456789ab';
    const REVOKED = 'env-key-revoked-by-operator-01';

    it('revokes at start the keys it made that it no longer lists (said in the log), and brings one back when listed again', async () => {
      const db = await createTestDatabase();
      const sim = await startSimulator();
      const logs: string[] = [];
      const start = (keys: string[]) =>
        startBroker(
          { BROKER_API_KEY: keys.join(','), ADMIN_TOKEN, LOG_LEVEL: 'info' },
          { db, sim, logs: { write: (line) => void logs.push(line) } },
        );
      const status = async (url: string, key: string) =>
        (await fetch(`${url}/v1/sessions?limit=1`, { headers: { authorization: `Bearer ${key}` } })).status;
      try {
        let broker = await start([KEEP, DROP, REVOKED]);
        // A key the admin API made for the same account is not the environment's to revoke.
        const accounts = (await (
          await fetch(`${broker.url}/v1/admin/accounts`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
        ).json()) as {
          accounts: Array<{ id: string; apiKeys: Array<{ id: string; prefix: string }> }>;
        };
        const keep = accounts.accounts.find((a) => a.apiKeys.some((k) => KEEP.startsWith(k.prefix)))!;
        const made = (await (
          await fetch(`${broker.url}/v1/admin/accounts/${keep.id}/api-keys`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ label: 'BROKER_API_KEY' }),
          })
        ).json()) as { key: string };
        // An operator revokes one of the listed keys.
        const revoked = accounts.accounts.flatMap((a) => a.apiKeys).find((k) => REVOKED.startsWith(k.prefix))!;
        await fetch(`${broker.url}/v1/admin/api-keys/${revoked.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        await broker.close();

        logs.length = 0;
        broker = await start([KEEP, REVOKED]);
        expect(await status(broker.url, KEEP)).toBe(200);
        expect(await status(broker.url, DROP)).toBe(401);
        expect(await status(broker.url, made.key)).toBe(200);
        // Still listed, but an operator revoked it: it stays revoked, and the start says so.
        expect(await status(broker.url, REVOKED)).toBe(401);
        const said = logs.join('\n');
        expect(said).toContain(`revoked API key ${DROP.slice(0, 10)}…: no longer configured (BROKER_API_KEY)`);
        expect(said).toContain(`API key ${REVOKED.slice(0, 10)}… is configured (BROKER_API_KEY) but was revoked by an operator`);
        expect(said).not.toContain(DROP);
        await broker.close();

        broker = await start([KEEP, DROP]);
        expect(await status(broker.url, DROP)).toBe(200);
        expect(await status(broker.url, REVOKED)).toBe(401);
        await broker.close();
      } finally {
        await sim.app.close();
        await db.drop();
      }
    }, 120_000);
  });
});
