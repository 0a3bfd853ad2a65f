/**
 * What the broker answers on Fastify where Fastify alone would answer otherwise than the broker did on
 * Express (apps/broker/src/broker-app.ts): a path that does not decode, a long path parameter, a
 * Content-Type Fastify cannot parse, the request log's id, and the docs page's files.
 */
import request from 'supertest';
import { API_KEY, AUTH_ENV } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';

describe('the broker on Fastify answers as it did on Express', () => {
  let broker: BrokerHarness;

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV });
  });
  afterAll(() => broker.close());

  it('answers a path that does not decode with a 400 problem carrying a request id', async () => {
    for (const path of ['/v1/sessions/%', '/%E0%A4%A']) {
      const res = await request(broker.url).get(path).set('authorization', `Bearer ${API_KEY}`);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ type: 'about:blank', title: 'Bad request', status: 400 });
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('takes a path parameter of any length up to what Node reads (an unknown session, not 414)', async () => {
    for (const length of [100, 101, 8000]) {
      const res = await request(broker.url)
        .get(`/v1/sessions/${'a'.repeat(length)}`)
        .set('authorization', `Bearer ${API_KEY}`);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ type: '/problems/session-not-found' });
    }
  });

  it('authenticates before refusing a Content-Type Fastify cannot parse: 401 without a key, 415 naming it with one', async () => {
    for (const type of [';;;', 'foo', 'text/plain']) {
      const anonymous = await request(broker.url).post('/v1/sessions').set('content-type', type).send('{}');
      expect(anonymous.status).toBe(401);
      const keyed = await request(broker.url)
        .post('/v1/sessions')
        .set('authorization', `Bearer ${API_KEY}`)
        .set('content-type', type)
        .send('{}');
      expect(keyed.status).toBe(415);
      expect(keyed.body).toMatchObject({
        type: '/problems/unsupported-media-type',
        detail: `Send the body as application/json (got "${type}").`,
      });
    }
  });

  it('serves the docs page with the Swagger UI files it loads, and 404 for any other name', async () => {
    const page = await request(broker.url).get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const links = [...page.text.matchAll(/(?:href|src|url)(?:="|: ')\.\/docs\/([^"']+)["']/g)].map((m) => m[1]);
    expect(links).toEqual(
      expect.arrayContaining(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'openapi.json']),
    );
    for (const name of links) await request(broker.url).get(`/docs/${name}`).expect(200);
    const slashed = await request(broker.url).get('/docs/').expect(200);
    expect(slashed.text).toContain('href="./swagger-ui.css"');
    const missing = await request(broker.url).get('/docs/package.json').expect(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
