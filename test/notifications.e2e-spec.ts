/**
 * Outbound notifications through the running broker: the account's callback URL and secret routes, events
 * recorded through the outbox and delivered to a local receiver, signed (verified with the helper customers
 * use), with their deliveries and attempts readable over the API, and tenancy between accounts.
 */
import request from 'supertest';
import { DataSource } from 'typeorm';
import { hashApiKey } from '../apps/broker/src/accounts/api-key-hash';
import { constructEvent } from '@app/sdk';
import { EventOutbox, transactionThenWake } from '../apps/broker/src/notifications';
import { WebhookSecrets } from '../apps/broker/src/accounts/webhook-secrets/webhook-secrets';
import { WebhookReceiver } from '@app/testing';
import { eventually, freePort } from './support/processes';
import { startBroker, type BrokerHarness } from './support/broker-harness';

const KEY_A = 'key-aaaaaaaaaaaaaaaa';
const KEY_B = 'key-bbbbbbbbbbbbbbbb';
const SESSION = '0b7a4c8e-9d1f-4e2a-8c3b-5f6e7d8c9b0a';
/** A wake of the delivery workers that failed after the commit: not expected against a live database. */
const failOnWarning = (message: string) => {
  throw new Error(message);
};
const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'];

describe('webhooks over HTTP', () => {
  let broker: BrokerHarness;
  let strict: BrokerHarness;
  let receiver: WebhookReceiver;
  let secret: string;
  const savedEnv: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // A proxy in the environment is ignored: deliveries go straight to the endpoint.
    const deadProxy = `http://127.0.0.1:${await freePort()}`;
    for (const name of PROXY_VARIABLES) {
      savedEnv[name] = process.env[name];
      process.env[name] = deadProxy;
    }
    receiver = await WebhookReceiver.start();
    broker = await startBroker({
      BROKER_API_KEY: `${KEY_A},${KEY_B}`,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      WEBHOOK_RETRY_BASE_MS: '20',
      WEBHOOK_RETRY_MAX_MS: '100',
    });
    strict = await startBroker({ BROKER_API_KEY: KEY_A }, { sim: broker.sim });
  });
  afterAll(async () => {
    await strict?.close();
    await broker?.close();
    await receiver?.close();
    for (const name of PROXY_VARIABLES) {
      if (savedEnv[name] === undefined) delete process.env[name];
      else process.env[name] = savedEnv[name];
    }
  });

  const api = (key = KEY_A) => ({
    get: (path: string) => request(broker.url).get(path).set('authorization', `Bearer ${key}`),
    put: (path: string) => request(broker.url).put(path).set('authorization', `Bearer ${key}`),
    post: (path: string) => request(broker.url).post(path).set('authorization', `Bearer ${key}`),
  });

  async function accountOf(key: string): Promise<string> {
    const [row] = (await broker.app
      .get(DataSource)
      .query('SELECT account_id FROM api_keys WHERE key_hash = $1', [hashApiKey(key)])) as Array<{
      account_id: string;
    }>;
    return row.account_id;
  }

  async function record(key: string, data: Record<string, unknown>, callbackUrl: string | null = null, sessionId = SESSION) {
    const accountId = await accountOf(key);
    return transactionThenWake(broker.app.get(DataSource), failOnWarning, (manager, wakes) =>
      broker.app.get(EventOutbox).record(manager, { type: 'message.relayed', accountId, sessionId, callbackUrl, data }, wakes),
    );
  }

  it('asks for an API key', async () => {
    const res = await request(broker.url).get('/v1/events');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it.each([
    ['http://127.0.0.1:8080/hooks', /public address: the host is a loopback address/],
    ['http://2130706433/', /public address: the host is a loopback address/],
    ['http://[::ffff:169.254.169.254]/', /IPv4-mapped/],
    ['http://metadata.internal/', /not public/],
    ['ftp://example.com/', /http or https URL/],
  ])('refuses %s as a callback URL with a 400 problem naming the field', async (url, message) => {
    const res = await request(strict.url)
      .put('/v1/account/callback-url')
      .set('authorization', `Bearer ${KEY_A}`)
      .send({ callbackUrl: url });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors).toEqual([{ field: 'callbackUrl', message: expect.stringMatching(message) }]);
  });

  it('refuses a missing or overlong callbackUrl', async () => {
    const missing = await api().put('/v1/account/callback-url').send({});
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].field).toBe('callbackUrl');
    const long = await api()
      .put('/v1/account/callback-url')
      .send({ callbackUrl: `https://example.com/${'a'.repeat(2048)}` });
    expect(long.status).toBe(400);
    expect(long.body.errors).toContainEqual({ field: 'callbackUrl', message: 'callbackUrl must be at most 2048 characters' });
  });

  it("sets the account's default callback URL, showing the first webhook secret once", async () => {
    // Made with the account (here at start-up, from BROKER_API_KEY), not yet shown.
    const before = await api().get('/v1/account/webhook-secret').expect(200);
    expect(before.body).toEqual({ configured: true, revealed: false, createdAt: expect.any(String), previousSecretExpiresAt: null });
    const set = await api().put('/v1/account/callback-url').send({ callbackUrl: receiver.url }).expect(200);
    expect(set.body.callbackUrl).toBe(receiver.url);
    expect(set.body.webhookSecret).toMatch(/^whsec_/);
    secret = set.body.webhookSecret as string;
    const again = await api().put('/v1/account/callback-url').send({ callbackUrl: receiver.url }).expect(200);
    expect(again.body).toEqual({ callbackUrl: receiver.url });
    expect((await api().get('/v1/account/callback-url').expect(200)).body).toEqual({ callbackUrl: receiver.url });
    const status = await api().get('/v1/account/webhook-secret').expect(200);
    expect(status.body).toEqual({ configured: true, revealed: true, createdAt: before.body.createdAt, previousSecretExpiresAt: null });
    expect(JSON.stringify(status.body)).not.toContain('whsec_');
    // Seen once: the reveal refuses to show it again.
    const reveal = await api().post('/v1/account/webhook-secret/reveal').expect(409);
    expect(reveal.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.stringify(reveal.body)).not.toContain('whsec_');
  });

  it('delivers an event to the default URL, signed, and shows it with its delivery and attempts', async () => {
    const { eventId, deliveryId } = await record(KEY_A, { text: 'hello' });
    await eventually(async () => receiver.eventIds().includes(eventId));
    const got = receiver.received.find((r) => r.headers['webhook-id'] === deliveryId)!;
    expect(constructEvent(got.body, got.headers, secret)).toMatchObject({ id: eventId, type: 'message.relayed', data: { text: 'hello' } });

    await eventually(async () => (await api().get(`/v1/deliveries/${deliveryId}`)).body.status === 'delivered');
    const res = await api().get(`/v1/deliveries/${deliveryId}`).expect(200);
    expect(res.body).toMatchObject({
      id: deliveryId,
      eventId,
      eventType: 'message.relayed',
      sessionId: SESSION,
      url: receiver.url,
      status: 'delivered',
      nextAttemptAt: null,
      endpoint: { condition: 'healthy', breakerState: 'CLOSED' },
    });
    expect(res.body.attempts).toEqual([
      { number: 1, startedAt: expect.any(String), durationMs: expect.any(Number), statusCode: 200, error: null, delivered: true },
    ]);

    const events = await api().get(`/v1/events?session=${SESSION}`).expect(200);
    expect(events.body.events[0]).toMatchObject({ id: eventId, type: 'message.relayed', sessionId: SESSION, data: { text: 'hello' } });
    expect(events.body.events[0].deliveries).toEqual([expect.objectContaining({ id: deliveryId, status: 'delivered', attempts: 1 })]);
  });

  it('shows failed attempts with their status and error, and retries until delivered', async () => {
    let calls = 0;
    receiver.answer = (req) => (req.path === '/hooks/flaky' && calls++ === 0 ? { status: 500 } : { status: 204 });
    const { deliveryId } = await record(KEY_A, { n: 1 }, `${receiver.url}/flaky`);
    await eventually(async () => (await api().get(`/v1/deliveries/${deliveryId}`)).body.status === 'delivered');
    receiver.answer = () => ({ status: 200 });
    const res = await api().get(`/v1/deliveries/${deliveryId}`).expect(200);
    expect(res.body.attempts.map((a: { statusCode: number; error: string | null }) => [a.statusCode, a.error])).toEqual([
      [500, 'HTTP 500'],
      [204, null],
    ]);
  });

  it("keeps accounts apart: another account's deliveries and sessions are 404", async () => {
    const { deliveryId } = await record(KEY_A, { private: true });
    const other = await api(KEY_B).get(`/v1/deliveries/${deliveryId}`);
    expect(other.status).toBe(404);
    expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await api(KEY_B).get(`/v1/events?session=${SESSION}`)).status).toBe(404);
    expect((await api(KEY_B).get('/v1/events').expect(200)).body.events).toEqual([]);
    expect((await api().get('/v1/deliveries/not-a-uuid')).status).toBe(404);
  });

  it('pages through events newest first with a cursor, and names bad query fields', async () => {
    const session = '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a';
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await record(KEY_A, { i }, null, session)).eventId);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: request.Response = await api()
        .get(`/v1/events?session=${session}&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        .expect(200);
      expect(page.body.events.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.events.map((e: { id: string }) => e.id));
      cursor = page.body.nextCursor as string | null;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(new Set(seen)).toEqual(new Set(ids));
    const data = (await api().get(`/v1/events?session=${session}`).expect(200)).body.events.map((e: { data: { i: number } }) => e.data.i);
    expect(data).toEqual([...data].sort((a, b) => b - a));

    for (const [query, field] of [
      ['session=nope', 'session'],
      ['limit=0', 'limit'],
      ['cursor=abc', 'cursor'],
    ]) {
      const res = await api().get(`/v1/events?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
  });

  it('rotates the secret: shown once, and for 24 h both the new and the previous one sign', async () => {
    const rotated = await api().post('/v1/account/webhook-secret/rotate').expect(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.parse(rotated.body.createdAt)).toBe(24 * 60 * 60 * 1000);
    const status = await api().get('/v1/account/webhook-secret').expect(200);
    expect(status.body).toEqual({
      configured: true,
      revealed: true,
      createdAt: rotated.body.createdAt,
      previousSecretExpiresAt: rotated.body.previousSecretExpiresAt,
    });

    const { deliveryId } = await record(KEY_A, { after: 'rotation' });
    await eventually(async () => receiver.received.some((r) => r.headers['webhook-id'] === deliveryId));
    const got = receiver.received.find((r) => r.headers['webhook-id'] === deliveryId)!;
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(constructEvent(got.body, got.headers, secret).data).toMatchObject({ after: 'rotation' });
    expect(constructEvent(got.body, got.headers, rotated.body.secret as string).data).toMatchObject({ after: 'rotation' });
  });

  it('an account whose first webhook already went out reads its secret once, without rotating', async () => {
    // Account B never set a default URL; a session callback URL got its first webhook, signed with a secret it never saw.
    const { deliveryId } = await record(KEY_B, { first: 'webhook' }, receiver.url);
    await eventually(async () => receiver.received.some((r) => r.headers['webhook-id'] === deliveryId));
    const got = receiver.received.find((r) => r.headers['webhook-id'] === deliveryId)!;
    expect((await api(KEY_B).get('/v1/account/webhook-secret').expect(200)).body).toMatchObject({ configured: true, revealed: false });

    const revealed = await api(KEY_B).post('/v1/account/webhook-secret/reveal').expect(200);
    expect(revealed.body).toEqual({
      secret: expect.stringMatching(/^whsec_/),
      createdAt: expect.any(String),
      previousSecretExpiresAt: null,
    });
    expect(constructEvent(got.body, got.headers, revealed.body.secret as string).data).toMatchObject({ first: 'webhook' });

    // Once: not again, and not in a later callback URL answer either.
    await api(KEY_B).post('/v1/account/webhook-secret/reveal').expect(409);
    const set = await api(KEY_B).put('/v1/account/callback-url').send({ callbackUrl: receiver.url }).expect(200);
    expect(set.body).toEqual({ callbackUrl: receiver.url });
    expect((await api(KEY_B).get('/v1/account/webhook-secret').expect(200)).body).toMatchObject({ revealed: true });
  });

  it("another account naming A's receiver can neither take it down for A nor read A's endpoint state (issue #29)", async () => {
    // A's receiver checks A's signature and refuses anything else, as a real receiver would.
    const aReceiver = await WebhookReceiver.start();
    const accountA = await accountOf(KEY_A);
    const secrets = broker.app.get(WebhookSecrets);
    aReceiver.answer = async (req) => {
      try {
        constructEvent(req.body, req.headers, await secrets.signingSecrets(accountA));
        return { status: 204 };
      } catch {
        return { status: 401 };
      }
    };
    const BLOCKED = ['down', 'breaker-open'];
    const create = (key: string, i: number) =>
      api(key)
        .post('/v1/sessions')
        .send({
          channel: 'sms',
          participants: [{ number: `+2348035${key === KEY_A ? 1 : 2}0000${i}` }, { number: `+2348036${key === KEY_A ? 1 : 2}0000${i}` }],
          callbackUrl: aReceiver.url,
        })
        .expect(201);
    try {
      // Tenant B points 5 sessions at A's receiver: its session.created webhooks are refused 401, B's endpoint goes down.
      const fromB: string[] = [];
      for (let i = 0; i < 5; i++) fromB.push((await create(KEY_B, i)).body.id as string);
      const deliveryOf = async (key: string, session: string): Promise<string | undefined> =>
        (await api(key).get(`/v1/events?session=${session}`).expect(200)).body.events[0]?.deliveries[0]?.id;
      await eventually(async () => {
        const id = await deliveryOf(KEY_B, fromB[0]);
        // Down after 3 failures in a row; the 5th also opens its per-URL breaker, when all 5 failed before the down state held.
        return id !== undefined && BLOCKED.includes((await api(KEY_B).get(`/v1/deliveries/${id}`)).body.endpoint?.condition);
      });

      // A's next session.created goes at once, on its first attempt, and A's endpoint is healthy.
      const fromA = (await create(KEY_A, 0)).body.id as string;
      let aDelivery: string | undefined;
      await eventually(async () => {
        aDelivery = await deliveryOf(KEY_A, fromA);
        return aDelivery !== undefined && (await api().get(`/v1/deliveries/${aDelivery}`)).body.status === 'delivered';
      });
      const a = await api().get(`/v1/deliveries/${aDelivery}`).expect(200);
      expect(a.body).toMatchObject({ status: 'delivered', endpoint: { condition: 'healthy', blockedUntil: null, lastError: null } });
      expect(a.body.attempts).toHaveLength(1);

      // B reads B's own endpoint state for that URL (down, its own 401s), never A's.
      const b = await api(KEY_B)
        .get(`/v1/deliveries/${await deliveryOf(KEY_B, fromB[0])}`)
        .expect(200);
      expect(b.body.endpoint).toMatchObject({ condition: expect.stringMatching(/^(down|breaker-open)$/), lastError: 'HTTP 401' });
      expect(b.body.endpoint.blockedUntil).not.toBeNull();
      expect((await api(KEY_B).get(`/v1/deliveries/${aDelivery}`)).status).toBe(404);
    } finally {
      await aReceiver.close();
    }
  });

  it('documents the routes in the OpenAPI document', async () => {
    const doc = await request(broker.url).get('/docs/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/events',
        '/v1/deliveries/{id}',
        '/v1/account/callback-url',
        '/v1/account/webhook-secret',
        '/v1/account/webhook-secret/rotate',
        '/v1/account/webhook-secret/reveal',
      ]),
    );
  });
});
