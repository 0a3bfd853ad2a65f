/**
 * The admin API (ADMIN_TOKEN): the proxy-number pool (numbers dedicated to one account included),
 * accounts and API keys.
 */
import request from 'supertest';
import { PoolUsage } from '../apps/broker/src/providers/pool-usage';
import { ADMIN_TOKEN, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';

describe('admin API', () => {
  let broker: BrokerHarness;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV, SIM_SEED_NUMBERS: '3' });
  });
  afterAll(() => broker.close());

  it('refuses requests without the admin token, and everything while ADMIN_TOKEN is unset', async () => {
    const missing = await request(broker.url).get('/v1/admin/numbers').expect(401);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    await request(broker.url).get('/v1/admin/numbers').set('authorization', 'Bearer wrong-token-wrong-token').expect(401);

    const unset = await startBroker({ BROKER_API_KEY: AUTH_ENV.BROKER_API_KEY });
    try {
      const res = await request(unset.url).get('/v1/admin/numbers').set(admin).expect(403);
      expect(res.body.detail).toMatch(/ADMIN_TOKEN/);
    } finally {
      await unset.close();
    }
  });

  it('lists the seeded pool with how many active sessions each number carries', async () => {
    const session = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body;
    const res = await request(broker.url).get('/v1/admin/numbers?provider=primary').set(admin).expect(200);
    expect(res.body.numbers).toHaveLength(3);
    const used = res.body.numbers.find((n: { number: string }) => n.number === session.proxyNumber);
    expect(used).toMatchObject({ provider: 'primary', enabled: true, activeSessions: 1, capabilities: ['sms', 'voice'] });
    expect(res.body.numbers.filter((n: { activeSessions: number }) => n.activeSessions === 0)).toHaveLength(2);

    // The health route shows the same, from memory, as of the last refresh.
    await broker.app.get(PoolUsage).refresh();
    const health = await request(broker.url).get('/v1/health/cpaas').expect(200);
    expect(health.body.providers[0]).toMatchObject({
      name: 'primary',
      activeSessions: 1,
      activeSessionsByChannels: { sms: 1 },
      pool: { total: 3, enabled: 3, inUse: 1, voice: 3, sms: 3 },
    });
  });

  it('adds a number, refuses a bad one naming the field, and disables one so new sessions avoid it', async () => {
    const added = await request(broker.url)
      .post('/v1/admin/numbers')
      .set(admin)
      .send({ provider: 'failover', number: '+2349029999999', capabilities: ['sms'] })
      .expect(201);
    expect(added.body).toMatchObject({
      provider: 'failover',
      number: '+2349029999999',
      capabilities: ['sms'],
      enabled: true,
      activeSessions: 0,
    });

    const bad = await request(broker.url).post('/v1/admin/numbers').set(admin).send({ provider: 'failover', number: '0803' }).expect(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['number']);
    const unknown = await request(broker.url)
      .post('/v1/admin/numbers')
      .set(admin)
      .send({ provider: 'nope', number: '+2349029999998' })
      .expect(400);
    expect(unknown.body.errors.map((e: { field: string }) => e.field)).toEqual(['provider']);

    const primary = (await request(broker.url).get('/v1/admin/numbers?provider=primary').set(admin).expect(200)).body.numbers;
    for (const n of primary) await request(broker.url).delete(`/v1/admin/numbers/${n.id}`).set(admin).expect(200);
    const session = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body;
    expect(session.provider).toBe('failover');
    await request(broker.url).delete('/v1/admin/numbers/not-an-id').set(admin).expect(404);

    const again = await request(broker.url)
      .post('/v1/admin/numbers')
      .set(admin)
      .send({ provider: 'primary', number: primary[0].number })
      .expect(201);
    expect(again.body.enabled).toBe(true);
    expect((await createSession(broker.url, sessionBody(freshPair())).expect(201)).body.provider).toBe('primary');
  });

  it('dedicates a number to one account: only its sessions get it, the list shows it, and it can go back to the shared pool', async () => {
    const owner = (await request(broker.url).post('/v1/admin/accounts').set(admin).send({ name: 'dedicated fleet' }).expect(201)).body;
    const added = (
      await request(broker.url).post('/v1/admin/numbers').set(admin).send({ provider: 'primary', number: '+2349010009901' }).expect(201)
    ).body;
    expect(added.accountId).toBeNull();
    const dedicated = await request(broker.url)
      .put(`/v1/admin/numbers/${added.id}/account`)
      .set(admin)
      .send({ accountId: owner.account.id })
      .expect(200);
    expect(dedicated.body).toMatchObject({ id: added.id, accountId: owner.account.id });
    const listed = (await request(broker.url).get('/v1/admin/numbers?provider=primary').set(admin).expect(200)).body.numbers;
    expect(listed.find((n: { id: string }) => n.id === added.id).accountId).toBe(owner.account.id);

    // Another account's sessions with one person take every shared number on primary that is free for
    // them, then go to the failover: never to the dedicated number.
    const person = '+2348030009901';
    const shared = listed.filter((n: { enabled: boolean; accountId: string | null }) => n.enabled && n.accountId === null);
    const others = [];
    for (let i = 0; i < shared.length + 1; i++)
      others.push((await createSession(broker.url, sessionBody([person, `+23480300099${10 + i}`])).expect(201)).body);
    expect(others.map((s) => s.proxyNumber)).not.toContain('+2349010009901');
    expect(others.at(-1).provider).toBe('failover');
    // The owner's session with the same person gets its own number, first.
    const own = (await createSession(broker.url, sessionBody([person, '+2348030009950']), owner.apiKey.key).expect(201)).body;
    expect(own).toMatchObject({ provider: 'primary', proxyNumber: '+2349010009901' });

    const back = await request(broker.url).delete(`/v1/admin/numbers/${added.id}/account`).set(admin).expect(200);
    expect(back.body.accountId).toBeNull();
    const unknown = await request(broker.url)
      .put(`/v1/admin/numbers/${added.id}/account`)
      .set(admin)
      .send({ accountId: '7f1d5c0a-0000-4000-8000-000000000000' })
      .expect(422);
    expect(unknown.body.errors.map((e: { field: string }) => e.field)).toEqual(['accountId']);
    const bad = await request(broker.url).put(`/v1/admin/numbers/${added.id}/account`).set(admin).send({ accountId: 'x' }).expect(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['accountId']);
    await request(broker.url)
      .put('/v1/admin/numbers/7f1d5c0a-0000-4000-8000-000000000000/account')
      .set(admin)
      .send({ accountId: owner.account.id })
      .expect(404);
  });

  it('creates accounts and keys (shown once, stored hashed) and revokes keys', async () => {
    const created = await request(broker.url).post('/v1/admin/accounts').set(admin).send({ name: 'marketplace' }).expect(201);
    const key: string = created.body.apiKey.key;
    expect(key).toMatch(/^sk_/);
    expect(created.body.account.apiKeys[0].prefix).toBe(key.slice(0, 10));

    const session = await createSession(broker.url, sessionBody(freshPair()), key).expect(201);
    expect(session.body.status).toBe('active');

    const list = await request(broker.url).get('/v1/admin/accounts').set(admin).expect(200);
    expect(JSON.stringify(list.body)).not.toContain(key);
    const extra = await request(broker.url)
      .post(`/v1/admin/accounts/${created.body.account.id}/api-keys`)
      .set(admin)
      .send({ label: 'ci' })
      .expect(201);
    expect(extra.body.key).not.toBe(key);

    await request(broker.url).delete(`/v1/admin/api-keys/${created.body.apiKey.id}`).set(admin).expect(200);
    // The key cache lives a few seconds: poll, bounded.
    let status = 201;
    for (let i = 0; i < 100 && status !== 401; i++) {
      status = (await request(broker.url).get('/v1/sessions').set('authorization', `Bearer ${key}`)).status;
      if (status !== 401) await new Promise((done) => setTimeout(done, 100));
    }
    expect(status).toBe(401);
    await request(broker.url).get('/v1/sessions').set('authorization', `Bearer ${extra.body.key}`).expect(200);
  }, 30_000);
});
