/**
 * Two broker replicas on one database: a breaker change on one reaches the other (LISTEN/NOTIFY),
 * as does an operator's disable.
 */
import request from 'supertest';
import { ADMIN_TOKEN, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, startSimulator, type BrokerHarness, type SimulatorHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault } from './support/sim-control';

async function primaryOf(broker: BrokerHarness): Promise<{ state: string; openedAt: string | null; disabled: boolean }> {
  const res = await request(broker.url).get('/v1/health/cpaas').expect(200);
  return res.body.providers.find((p: { name: string }) => p.name === 'primary');
}

describe('replicas sharing one database', () => {
  let sim: SimulatorHarness;
  let a: BrokerHarness;
  let b: BrokerHarness;

  beforeAll(async () => {
    sim = await startSimulator();
    a = await startBroker({ ...AUTH_ENV, BREAKER_HEALTH_INTERVAL_MS: '3600000' }, { sim });
    b = await startBroker({ ...AUTH_ENV, BREAKER_HEALTH_INTERVAL_MS: '3600000' }, { sim, db: a.db });
  });
  afterAll(async () => {
    await b?.app.close();
    await a?.close();
    await sim?.app.close();
  });

  it('carries an OPEN breaker from the replica that tripped it to the other', async () => {
    await setFault(sim.url, 'primary', { mode: 'down' });
    for (let i = 0; i < 5; i++) await createSession(a.url, sessionBody(freshPair())).expect(201);
    const tripped = await primaryOf(a);
    expect(tripped.state).toBe('OPEN');

    await eventually(async () => (await primaryOf(b)).state === 'OPEN', 100, 50);
    expect((await primaryOf(b)).openedAt).toBe(tripped.openedAt);
    // B now sends new sessions straight to the failover too.
    expect((await createSession(b.url, sessionBody(freshPair())).expect(201)).body.provider).toBe('failover');
    await setFault(sim.url, 'primary', { mode: 'ok' });
  });

  it('carries an operator’s disable to the other replica', async () => {
    await request(a.url).post('/v1/admin/providers/failover/disable').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({}).expect(200);
    await eventually(
      async () => {
        const res = await request(b.url).get('/v1/health/cpaas').expect(200);
        return res.body.providers.find((p: { name: string }) => p.name === 'failover').disabled === true;
      },
      100,
      50,
    );
  });
});
