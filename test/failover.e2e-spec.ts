/**
 * A steady stream of session creates through a full primary outage and its recovery, against the
 * real simulator, with shortened breaker durations: not one create fails, and each phase routes
 * where the breaker says.
 */
import request from 'supertest';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { advanceBreakerTime } from './support/breaker-time';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { setFault, simCalls } from './support/sim-control';

describe('failover through a primary outage', () => {
  let broker: BrokerHarness;
  const statuses: number[] = [];

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      BREAKER_HEALTH_INTERVAL_MS: '3600000', // probe rounds are triggered by the test
      BREAKER_HALF_OPEN_PROBE_SHARE: '0.25',
      BREAKER_CLOSE_AFTER_MS: '600000', // never reached by waiting: the test moves the breakers' time
      BREAKER_CLOSE_MIN_PROBES: '4',
      PROVIDER_CALL_TIMEOUT_MS: '300',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
  });
  afterAll(() => broker.close());

  async function create(): Promise<{ id: string; provider: string }> {
    const res = await createSession(broker.url, sessionBody(freshPair()));
    statuses.push(res.status);
    return res.body;
  }

  async function creates(n: number): Promise<string[]> {
    const providers: string[] = [];
    for (let i = 0; i < n; i++) providers.push((await create()).provider);
    return providers;
  }

  async function primaryState(): Promise<string> {
    const res = await request(broker.url).get('/v1/health/cpaas').expect(200);
    return res.body.providers.find((p: { name: string }) => p.name === 'primary').state;
  }

  it('never fails a create, and routes each phase as the breaker says', async () => {
    const before: Array<{ id: string; provider: string }> = [];
    for (let i = 0; i < 5; i++) before.push(await create());
    expect(before.map((s) => s.provider)).toEqual(Array(5).fill('primary'));

    // Outage: the first creates pay the primary's failure and fail over within the request.
    await setFault(broker.sim.url, 'primary', { mode: 'down' });
    expect(await creates(5)).toEqual(Array(5).fill('failover'));
    expect(await primaryState()).toBe('OPEN');
    const primaryBinds = (await simCalls(broker.sim.url, 'primary', 'bind')).length;
    expect(await creates(10)).toEqual(Array(10).fill('failover'));
    expect((await simCalls(broker.sim.url, 'primary', 'bind')).length).toBe(primaryBinds);

    // Recovery: health checks pass; still OPEN until the 5th.
    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    for (let i = 0; i < 4; i++) {
      await broker.app.get(HealthProber).tick();
      expect(await creates(1)).toEqual(['failover']);
    }
    await broker.app.get(HealthProber).tick();
    expect(await primaryState()).toBe('HALF_OPEN');

    // HALF_OPEN: every 4th new session probes the primary, the rest stay on the failover.
    expect(await creates(8)).toEqual(['failover', 'failover', 'failover', 'primary', 'failover', 'failover', 'failover', 'primary']);

    // Probe traffic keeps succeeding (sessions and health checks); 8 more creates make 4 probe sessions in
    // all, the gate's minimum (health checks do not count towards it). The gate waits for its duration on
    // the breakers' time, which the test moves instead of waiting.
    for (let round = 0; round < 8; round++) {
      await broker.app.get(HealthProber).tick();
      await create();
    }
    expect(await primaryState()).toBe('HALF_OPEN');
    advanceBreakerTime(broker, 600_000);
    await broker.app.get(HealthProber).tick();
    expect(await primaryState()).toBe('CLOSED');
    expect(await creates(5)).toEqual(Array(5).fill('primary'));

    expect(statuses.every((s) => s === 201)).toBe(true);
    // Sessions made before the outage stayed on the primary, active, all along.
    for (const session of before) {
      const res = await request(broker.url).get(`/v1/sessions/${session.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
      expect(res.body).toMatchObject({ provider: 'primary', status: 'active' });
    }
  }, 60_000);

  it('fails over within the request when the primary holds the bind past the call timeout, until the breaker opens', async () => {
    await setFault(broker.sim.url, 'primary', { mode: 'timeout' });
    try {
      const held = (await simCalls(broker.sim.url, 'primary', 'bind')).length;
      for (let i = 1; i <= 5 && (await primaryState()) !== 'OPEN'; i++) {
        const res = await createSession(broker.url, sessionBody(freshPair()));
        expect(res.status).toBe(201);
        expect(res.body.provider).toBe('failover');
      }
      const outcomes = (await simCalls(broker.sim.url, 'primary', 'bind')).slice(held).map((b) => b.outcome);
      expect(outcomes.length).toBeGreaterThan(0);
      expect(new Set(outcomes)).toEqual(new Set(['timeout']));
      const primary = (await request(broker.url).get('/v1/health/cpaas').expect(200)).body.providers[0];
      expect(primary).toMatchObject({ name: 'primary', state: 'OPEN', lastError: 'primary: no answer within 300 ms on bind' });
    } finally {
      await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    }
  }, 30_000);
});
