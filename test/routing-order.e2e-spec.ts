/**
 * Routing when no breaker admits a create (docs/design.md#provider-breaker, "Routing"), against the
 * real simulator: the primary down and OPEN, the failover recovering in HALF_OPEN. A create outside the
 * failover's probe turn is admitted by neither breaker, and the providers that are not OPEN are tried
 * before the OPEN ones: no create calls the dead primary while the failover can take the session, and the
 * failover still gets exactly its probe share.
 */
import request from 'supertest';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { clearSimCalls, setFault, simCalls } from './support/sim-control';

interface ProviderView {
  name: string;
  state: string;
  probes: number;
  probeSuccesses: number;
}

describe('routing order when no breaker admits', () => {
  let broker: BrokerHarness;

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      BREAKER_HEALTH_INTERVAL_MS: '3600000', // health checks are triggered by the test
      BREAKER_HALF_OPEN_PROBE_SHARE: '0.25',
      // No fault here hangs ('down' answers at once): a deadline a loaded machine's healthy answers cannot miss.
      PROVIDER_CALL_TIMEOUT_MS: '5000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
  });
  afterAll(() => broker.close());

  async function providers(): Promise<Record<string, ProviderView>> {
    const res = await request(broker.url).get('/v1/health/cpaas').expect(200);
    return Object.fromEntries((res.body.providers as ProviderView[]).map((p) => [p.name, p]));
  }

  it('sends no create to the OPEN primary while the HALF_OPEN failover can take it, and keeps the failover’s probe share', async () => {
    const sim = broker.sim.url;
    // Both down: each create fails on both, and after 5 both breakers are OPEN.
    await setFault(sim, 'primary', { mode: 'down' });
    await setFault(sim, 'failover', { mode: 'down' });
    for (let i = 0; i < 5; i++) await createSession(broker.url, sessionBody(freshPair())).expect(503);
    expect(Object.values(await providers()).map((p) => p.state)).toEqual(['OPEN', 'OPEN']);

    // The failover recovers: 5 passing checks take it to HALF_OPEN; the primary's checks keep failing.
    await setFault(sim, 'failover', { mode: 'ok' });
    for (let i = 0; i < 5; i++) await broker.app.get(HealthProber).tick();
    const recovering = await providers();
    expect([recovering.primary.state, recovering.failover.state]).toEqual(['OPEN', 'HALF_OPEN']);
    expect(recovering.failover.probes).toBe(0);

    await clearSimCalls(sim, 'primary');
    await clearSimCalls(sim, 'failover');
    const made: string[] = [];
    for (let i = 0; i < 12; i++) made.push((await createSession(broker.url, sessionBody(freshPair())).expect(201)).body.provider);
    expect(made).toEqual(Array(12).fill('failover'));
    // Not one bind attempt on the dead primary.
    expect(await simCalls(sim, 'primary', 'bind')).toEqual([]);
    expect(await simCalls(sim, 'failover', 'bind')).toHaveLength(12);
    // Every 4th create was the failover's probe (share 0.25): 3 probes, all successes; still HALF_OPEN.
    const after = await providers();
    expect(after.failover).toMatchObject({ state: 'HALF_OPEN', probes: 3, probeSuccesses: 3 });
    expect(after.primary.state).toBe('OPEN');
  });
});
