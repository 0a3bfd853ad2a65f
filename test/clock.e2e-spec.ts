/**
 * The broker's one clock (CLOCK, provided once for the app): a test that moves it moves the time rules
 * of sessions, accounts and idempotency together, without waiting. Here: a session is active until its
 * expiresAt on the app's clock, and a close from then on ends it as expired; the provider health
 * snapshots carry its time.
 */
import type { Clock } from '@app/clock';
import request from 'supertest';
import { CLOCK } from '../apps/broker/src/common/clock';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';

describe('the one clock', () => {
  let broker: BrokerHarness;
  let clock: Clock;
  let wallNow: Clock['now'];

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV, SESSION_SWEEP_INTERVAL_MS: '3600000' });
    clock = broker.app.get<Clock>(CLOCK);
    wallNow = clock.now;
  });
  afterEach(() => {
    clock.now = wallNow;
  });
  afterAll(async () => {
    await broker?.close();
  });

  const read = (id: string) => request(broker.url).get(`/v1/sessions/${id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);

  it('reads a session as active 1 ms before its expiresAt on the app clock and expired from it on', async () => {
    const created = (await createSession(broker.url, sessionBody(freshPair(), { ttlSeconds: 60 })).expect(201)).body;
    const expiresAt = Date.parse(created.expiresAt);
    expect(created.status).toBe('active');

    clock.now = () => expiresAt - 1;
    expect((await read(created.id)).body.status).toBe('active');
    clock.now = () => expiresAt;
    expect((await read(created.id)).body.status).toBe('expired');

    const closed = await request(broker.url).delete(`/v1/sessions/${created.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
    expect(closed.body.status).toBe('expired');
  });

  it('closes a session as closed while its expiresAt on the app clock is still ahead', async () => {
    const created = (await createSession(broker.url, sessionBody(freshPair(), { ttlSeconds: 60 })).expect(201)).body;
    clock.now = () => Date.parse(created.expiresAt) - 1;
    const closed = await request(broker.url).delete(`/v1/sessions/${created.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
    expect(closed.body.status).toBe('closed');
  });

  it('stamps the provider health snapshots, public and admin, with the app clock', async () => {
    const at = Date.UTC(2031, 0, 2, 3, 4, 5, 6);
    clock.now = () => at;
    const health = await request(broker.url).get('/v1/health/cpaas').expect(200);
    expect(health.body.timestamp).toBe(new Date(at).toISOString());
    const admin = await request(broker.url).get('/v1/admin/providers').set('authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
    expect(admin.body.timestamp).toBe(new Date(at).toISOString());
  });
});
