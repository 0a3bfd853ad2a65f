import { Client } from 'pg';
import request from 'supertest';
import { API_KEY, AUTH_ENV } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';

describe('the broker over HTTP: health, errors, docs', () => {
  let broker: BrokerHarness;

  beforeAll(async () => {
    broker = await startBroker({ REQUEST_BODY_LIMIT_BYTES: '2048', ...AUTH_ENV });
  });
  afterAll(() => broker.close());

  it('answers liveness', async () => {
    const res = await request(broker.url).get('/health').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('answers readiness with the database up', async () => {
    const res = await request(broker.url).get('/health/ready').expect(200);
    expect(res.body.details.database.status).toBe('up');
  });

  it('answers malformed JSON with a 400 problem', async () => {
    // Bodies are read after authentication, so the route is a real one and the key a good one.
    const res = await request(broker.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${API_KEY}`)
      .set('content-type', 'application/json')
      .send('{"channel": ');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: '/problems/entity-parse-failed', title: 'Malformed JSON', status: 400 });
  });

  it('refuses a body over the size limit with a 413 problem', async () => {
    const res = await request(broker.url)
      .post('/v1/sessions')
      .set('authorization', `Bearer ${API_KEY}`)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ pad: 'x'.repeat(4096) }));
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('answers an unknown route with a 404 problem naming it', async () => {
    const res = await request(broker.url).get('/v1/nothing-here').expect(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual({ type: 'about:blank', title: 'Not found', status: 404, detail: 'No route GET /v1/nothing-here.' });
  });

  it('carries a request id, echoing a sane one from the client', async () => {
    const given = await request(broker.url).get('/health').set('x-request-id', 'abc-123');
    expect(given.headers['x-request-id']).toBe('abc-123');
    const made = await request(broker.url).get('/health').set('x-request-id', 'bad id with spaces');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves the OpenAPI document and its UI at /docs', async () => {
    const doc = await request(broker.url).get('/docs/openapi.json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toContain('/health/ready');
    const ui = await request(broker.url).get('/docs').expect(200);
    expect(ui.text).toContain('swagger');
  });

  it('goes not-ready (503 problem) while the database refuses connections, and ready again after', async () => {
    const admin = new Client({ connectionString: broker.db.url.replace(/\/[^/]+$/, '/postgres') });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${broker.db.name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        broker.db.name,
      ]);
      const down = await request(broker.url).get('/health/ready');
      expect(down.status).toBe(503);
      expect(down.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(down.body).toMatchObject({ status: 503, title: 'Not ready', detail: 'Not ready: database down.' });
    } finally {
      await admin.query(`ALTER DATABASE ${broker.db.name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    // Ready again without a restart: a pooled connection the server terminated may fail one check (503)
    // before the pool drops it, so a few checks, as a load balancer makes them.
    await eventually(async () => (await request(broker.url).get('/health/ready')).status === 200, 50, 100);
  });
});
