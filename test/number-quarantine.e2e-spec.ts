/**
 * Issue #29 item 4, as the probe reproduced it: tenant A's session (V, W) on N1 closes; tenant B's next session
 * (V, X) must not get N1, and V's text to N1 (people text an old masked number: "I left my wallet…") must not reach
 * X. A proxy number and a participant who shared a session meet no one else there for
 * SESSION_NUMBER_QUARANTINE_SECONDS (default 24 h) after it ends; the same two may share it again. Each provider
 * holds one number here, so without the quarantine N1 is the only number B's create could get on the primary.
 * Time moves on the app's clock, both sides of the quarantine's end.
 */
import type { Clock } from '@app/clock';
import request from 'supertest';
import { CLOCK } from '../apps/broker/src/common/clock';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, OTHER_API_KEY, createSession, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { clearSimCalls, simCalls, simInbound } from './support/sim-control';

const DAY_MS = 86_400_000;

describe('the proxy-number quarantine (SESSION_NUMBER_QUARANTINE_SECONDS)', () => {
  let broker: BrokerHarness;
  let clock: Clock;
  let wallNow: Clock['now'];

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV, SIM_SEED_NUMBERS: '1', SESSION_SWEEP_INTERVAL_MS: '3600000' });
    clock = broker.app.get<Clock>(CLOCK);
    wallNow = clock.now;
  });
  afterEach(() => {
    clock.now = wallNow;
  });
  afterAll(async () => {
    await broker?.close();
  });

  const close = (id: string, key = API_KEY) =>
    request(broker.url).delete(`/v1/sessions/${id}`).set('authorization', `Bearer ${key}`).expect(200);
  const admin = (method: 'get' | 'put' | 'delete', path: string) =>
    request(broker.url)[method](path).set('authorization', `Bearer ${ADMIN_TOKEN}`);
  const metric = async (line: string) => {
    const text = (await request(broker.url).get('/metrics').expect(200)).text;
    return Number(
      text
        .split('\n')
        .find((l) => l.startsWith(line))
        ?.split(' ')
        .pop() ?? NaN,
    );
  };

  it('gives another tenant’s session with V another number, and V’s text to the old one reaches nobody', async () => {
    const [v, w, x] = ['+2348034440001', '+2348034440002', '+2348034440003'];
    const a = (await createSession(broker.url, sessionBody([v, w])).expect(201)).body;
    expect(a.provider).toBe('primary');
    const n1 = a.proxyNumber;
    await close(a.id);

    const b = (await createSession(broker.url, sessionBody([v, x]), OTHER_API_KEY).expect(201)).body;
    expect({ provider: b.provider, proxyNumber: b.proxyNumber === n1 ? 'N1' : 'another' }).toEqual({
      provider: 'failover',
      proxyNumber: 'another',
    });

    await clearSimCalls(broker.sim.url, 'primary');
    await clearSimCalls(broker.sim.url, 'failover');
    const text = await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: v, to: n1, text: 'I left my wallet in the car' });
    // The out-of-session answer (OUT_OF_SESSION_REPLY: reject), nothing relayed to X on either provider.
    expect(text.status).toBe(404);
    expect(text.body).toMatchObject({ type: '/problems/no-active-session' });
    expect([...(await simCalls(broker.sim.url, 'primary', 'sms')), ...(await simCalls(broker.sim.url, 'failover', 'sms'))]).toEqual([]);
    const call = await simInbound(broker.sim.url, 'primary', { channel: 'voice', from: v, to: n1 });
    expect(call.status).toBe(404);
    expect(await simCalls(broker.sim.url, 'primary', 'call')).toEqual([]);

    // The same two people may share it again.
    const again = (await createSession(broker.url, sessionBody([w, v])).expect(201)).body;
    expect(again.proxyNumber).toBe(n1);
    await close(again.id);
    await close(b.id, OTHER_API_KEY);
  });

  it('holds the number until the quarantine has passed on the app clock, and a create it refused says why', async () => {
    const [v, w, x] = ['+2348034450001', '+2348034450002', '+2348034450003'];
    const endedAt = Date.now();
    clock.now = () => endedAt;
    const a = (await createSession(broker.url, sessionBody([v, w], { ttlSeconds: 3600 })).expect(201)).body;
    expect(a.provider).toBe('primary');
    await close(a.id);
    // The failover's one number is V's too, with someone else, until well past the primary's quarantine.
    const y = '+2348034450004';
    const held = (await createSession(broker.url, sessionBody([v, y], { ttlSeconds: 7 * 86_400 }), OTHER_API_KEY).expect(201)).body;
    expect(held.provider).toBe('failover');
    const refusals = (await metric('broker_limit_refusals_total{limit="session_number_quarantine"}')) || 0;
    expect(await metric('broker_limit{limit="session_number_quarantine_seconds"}')).toBe(86_400);

    clock.now = () => endedAt + DAY_MS - 1;
    const refused = await createSession(broker.url, sessionBody([v, x]), OTHER_API_KEY).expect(503);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ type: '/problems/pool-exhausted' });
    expect(refused.body.detail).toMatch(/1 of them is held by the quarantine.*SESSION_NUMBER_QUARANTINE_SECONDS/);
    expect(await metric('broker_limit_refusals_total{limit="session_number_quarantine"}')).toBe(refusals + 1);

    clock.now = () => endedAt + DAY_MS;
    const after = (await createSession(broker.url, sessionBody([v, x]), OTHER_API_KEY).expect(201)).body;
    expect(after.proxyNumber).toBe(a.proxyNumber);
    await close(after.id, OTHER_API_KEY);
    await close(held.id, OTHER_API_KEY);
  });

  it('on a number dedicated to the account: the rider’s next driver gets another, and the rider’s text is its out-of-session event', async () => {
    const [rider, driver, next] = ['+2348034460001', '+2348034460002', '+2348034460003'];
    const accounts = (await admin('get', '/v1/admin/accounts').expect(200)).body.accounts as Array<{
      id: string;
      apiKeys: Array<{ prefix: string }>;
    }>;
    const accountId = accounts.find((acc) => acc.apiKeys.some((k) => API_KEY.startsWith(k.prefix)))!.id;
    const numbers = (await admin('get', '/v1/admin/numbers?provider=primary').expect(200)).body.numbers as Array<{
      id: string;
      number: string;
    }>;
    const [dedicated] = numbers;
    await admin('put', `/v1/admin/numbers/${dedicated.id}/account`).send({ accountId }).expect(200);
    try {
      const ride = (await createSession(broker.url, sessionBody([rider, driver])).expect(201)).body;
      expect(ride.proxyNumber).toBe(dedicated.number);
      await close(ride.id);
      const nextRide = (await createSession(broker.url, sessionBody([rider, next])).expect(201)).body;
      expect(nextRide.proxyNumber).not.toBe(dedicated.number);

      await clearSimCalls(broker.sim.url, 'primary');
      await clearSimCalls(broker.sim.url, 'failover');
      const text = await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: rider, to: dedicated.number, text: 'my wallet?' });
      expect(text.status).toBe(404);
      expect([...(await simCalls(broker.sim.url, 'primary', 'sms')), ...(await simCalls(broker.sim.url, 'failover', 'sms'))]).toEqual([]);
      const events = (await request(broker.url).get('/v1/events?limit=100').set('authorization', `Bearer ${API_KEY}`).expect(200)).body
        .events as Array<{ type: string; data: Record<string, unknown> }>;
      expect(events.filter((e) => e.type === 'interaction.out_of_session' && e.data.from === rider)).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ proxyNumber: dedicated.number, sessionId: null, text: 'my wallet?' }) }),
      ]);
      await close(nextRide.id);
    } finally {
      await admin('delete', `/v1/admin/numbers/${dedicated.id}/account`).expect(200);
    }
  });
});
