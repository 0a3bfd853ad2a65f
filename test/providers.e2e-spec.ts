/**
 * The provider breaker's whole cycle, driven through the real simulator over HTTP and read
 * through GET /v1/health/cpaas, with durations shortened through the environment. Health probes
 * are triggered one round at a time (HealthProber.tick) and the close duration is crossed by moving
 * the breakers' time (BREAKER_SCHEDULER), so counts, not the wall clock, decide.
 */
import { Client } from 'pg';
import request from 'supertest';
import { BreakerStateStore } from '../apps/broker/src/providers/breaker-state.store';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { ADMIN_TOKEN, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { advanceBreakerTime } from './support/breaker-time';
import { startBroker, startSimulator, type BrokerHarness } from './support/broker-harness';
import { setFault, simCalls, type FaultMode } from './support/sim-control';

const CLOSE_AFTER_MS = 600_000;

const ENV = {
  ...AUTH_ENV,
  BREAKER_HEALTH_INTERVAL_MS: '3600000',
  BREAKER_WINDOW_MS: '600000',
  BREAKER_CLOSE_AFTER_MS: String(CLOSE_AFTER_MS), // never reached by waiting: tests move the breakers' time
  BREAKER_CLOSE_MIN_PROBES: '3',
  PROVIDER_CALL_TIMEOUT_MS: '300',
  SESSION_SWEEP_INTERVAL_MS: '3600000',
};

interface ProviderEntry {
  name: string;
  state: string;
  openedAt: string | null;
  lastError: string | null;
  disabled: boolean;
  consecutiveFailures: number;
  healthPasses: number;
  probes: number;
  trafficProbes: number;
}

async function cpaas(broker: BrokerHarness): Promise<{ providers: ProviderEntry[]; timestamp: string }> {
  return (await request(broker.url).get('/v1/health/cpaas').expect(200)).body;
}

async function primary(broker: BrokerHarness): Promise<ProviderEntry> {
  return (await cpaas(broker)).providers.find((p) => p.name === 'primary')!;
}

/** One create while the primary is in `mode`: the SDK always sees a 201, from whichever provider. */
async function createWith(broker: BrokerHarness, mode: FaultMode): Promise<{ provider: string }> {
  await setFault(broker.sim.url, 'primary', { mode });
  const res = await createSession(broker.url, sessionBody(freshPair()));
  expect(res.status).toBe(201);
  return res.body;
}

async function probeRounds(broker: BrokerHarness, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) await broker.app.get(HealthProber).tick();
}

/** From CLOSED: five failed creates open the primary. */
async function openPrimary(broker: BrokerHarness): Promise<void> {
  for (let i = 0; i < 5; i++) await createWith(broker, 'down');
  expect((await primary(broker)).state).toBe('OPEN');
}

/** From OPEN: five passing health checks make it HALF_OPEN. */
async function halfOpenPrimary(broker: BrokerHarness): Promise<void> {
  await setFault(broker.sim.url, 'primary', { mode: 'ok' });
  await probeRounds(broker, 5);
  expect((await primary(broker)).state).toBe('HALF_OPEN');
}

/** HALF_OPEN: `n` probe sessions, each bound on the primary (every 10th create probes it). */
async function probeSessions(broker: BrokerHarness, n: number): Promise<void> {
  const made: string[] = [];
  for (let i = 0; i < n * 10; i++) made.push((await createWith(broker, 'ok')).provider);
  expect(made.filter((p) => p === 'primary')).toHaveLength(n);
}

/** From HALF_OPEN: enough passing probes (binds; health checks alone never close), then the close duration on the breaker's time. */
async function closePrimary(broker: BrokerHarness): Promise<void> {
  await setFault(broker.sim.url, 'primary', { mode: 'ok' });
  await probeSessions(broker, 3);
  await probeRounds(broker, 3);
  expect((await primary(broker)).state).toBe('HALF_OPEN');
  advanceBreakerTime(broker, CLOSE_AFTER_MS);
  await probeRounds(broker, 1);
  expect((await primary(broker)).state).toBe('CLOSED');
}

/** CLOSED → OPEN → HALF_OPEN → OPEN → HALF_OPEN → CLOSED. */
async function fullCycle(broker: BrokerHarness): Promise<void> {
  await openPrimary(broker);
  await halfOpenPrimary(broker);
  await setFault(broker.sim.url, 'primary', { mode: 'error' });
  await probeRounds(broker, 1);
  expect((await primary(broker)).state).toBe('OPEN');
  await halfOpenPrimary(broker);
  await closePrimary(broker);
  await broker.app.get(BreakerStateStore).flush(); // the transitions are persisted in the background
}

// Each test starts from its own broker, so any one of them runs alone (`npm test -- -t "<name>"`).
describe('provider breaker through GET /v1/health/cpaas', () => {
  let broker: BrokerHarness;

  beforeEach(async () => {
    broker = await startBroker(ENV);
  });
  afterEach(() => broker.close());

  it('starts CLOSED, in exactly the documented shape', async () => {
    const body = await cpaas(broker);
    expect(Object.keys(body).sort()).toEqual(['leader', 'providers', 'replica', 'startedAt', 'timestamp']);
    // One broker on its database leads the cluster of one, and says so.
    expect((body as unknown as { leader: string }).leader).toBe((body as unknown as { replica: string }).replica);
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    expect(body.providers.map((p) => p.name)).toEqual(['primary', 'failover']);
    expect(body.providers[0]).toMatchObject({ name: 'primary', state: 'CLOSED', openedAt: null, lastError: null });
  });

  it('opens on the 5th consecutive failure (not the 4th), with openedAt and lastError set, and fails over meanwhile', async () => {
    for (let i = 1; i <= 4; i++) expect((await createWith(broker, 'down')).provider).toBe('failover');
    expect(await primary(broker)).toMatchObject({ state: 'CLOSED', consecutiveFailures: 4, openedAt: null });

    expect((await createWith(broker, 'down')).provider).toBe('failover');
    const open = await primary(broker);
    expect(open.state).toBe('OPEN');
    expect(Number.isNaN(Date.parse(open.openedAt!))).toBe(false);
    expect(open.lastError).toMatch(/primary/);

    // While OPEN, new sessions go straight to the failover: the primary is not even asked.
    const bindsBefore = (await simCalls(broker.sim.url, 'primary', 'bind')).length;
    expect((await createWith(broker, 'down')).provider).toBe('failover');
    expect((await simCalls(broker.sim.url, 'primary', 'bind')).length).toBe(bindsBefore);
  });

  it('goes HALF_OPEN after 5 passing health checks in a row (not 4), a failing one resetting the count', async () => {
    await openPrimary(broker);
    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    await probeRounds(broker, 3);
    await setFault(broker.sim.url, 'primary', { mode: 'error' });
    await probeRounds(broker, 1);
    expect(await primary(broker)).toMatchObject({ state: 'OPEN', healthPasses: 0 });

    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    await probeRounds(broker, 4);
    expect(await primary(broker)).toMatchObject({ state: 'OPEN', healthPasses: 4 });
    await probeRounds(broker, 1);
    expect(await primary(broker)).toMatchObject({ state: 'HALF_OPEN', openedAt: null });
  });

  it('re-opens on any failure while HALF_OPEN', async () => {
    await openPrimary(broker);
    await halfOpenPrimary(broker);
    await setFault(broker.sim.url, 'primary', { mode: 'error' });
    await probeRounds(broker, 1);
    expect((await primary(broker)).state).toBe('OPEN');
  });

  it('closes once probe traffic held > 95 % success for the close duration (not a minute less)', async () => {
    await openPrimary(broker);
    await halfOpenPrimary(broker);
    // The gate needs 3 probe sessions (health checks count in its rate, not towards its minimum) and
    // CLOSE_AFTER_MS in HALF_OPEN.
    await probeSessions(broker, 3);
    await probeRounds(broker, 3);
    // The breakers' time also runs with the wall clock, by a few ms here: a minute short is surely short.
    advanceBreakerTime(broker, CLOSE_AFTER_MS - 60_000);
    await probeRounds(broker, 1);
    expect((await primary(broker)).state).toBe('HALF_OPEN');
    advanceBreakerTime(broker, 60_000);
    await probeRounds(broker, 1);
    expect(await primary(broker)).toMatchObject({ state: 'CLOSED', openedAt: null, consecutiveFailures: 0 });
    expect((await createWith(broker, 'ok')).provider).toBe('primary');
  });

  it('never closes on health checks alone, however long: the gate counts probe sessions', async () => {
    await openPrimary(broker);
    await halfOpenPrimary(broker);
    await probeRounds(broker, 3);
    advanceBreakerTime(broker, CLOSE_AFTER_MS);
    await probeRounds(broker, 1);
    expect(await primary(broker)).toMatchObject({ state: 'HALF_OPEN', probes: 4, probeSuccesses: 4, trafficProbes: 0 });
    await probeSessions(broker, 2);
    expect(await primary(broker)).toMatchObject({ state: 'HALF_OPEN', probes: 6, trafficProbes: 2 });
    // The 3rd probe session's bind is the gate's 3rd probe of real traffic: it closes.
    await probeSessions(broker, 1);
    expect((await primary(broker)).state).toBe('CLOSED');
  });

  it('keeps every transition in the history, newest first', async () => {
    await fullCycle(broker);
    const res = await request(broker.url).get('/v1/health/cpaas/history?provider=primary').expect(200);
    const path = (res.body.transitions as Array<{ from: string; to: string }>).map((t) => `${t.from}>${t.to}`).reverse();
    expect(path).toEqual(['CLOSED>OPEN', 'OPEN>HALF_OPEN', 'HALF_OPEN>OPEN', 'OPEN>HALF_OPEN', 'HALF_OPEN>CLOSED']);
    await request(broker.url).get('/v1/health/cpaas/history?provider=nope').expect(404);
    const page = await request(broker.url).get('/v1/health/cpaas/history?limit=2').expect(200);
    expect(page.body.transitions).toHaveLength(2);
    const next = await request(broker.url).get(`/v1/health/cpaas/history?limit=2&cursor=${page.body.nextCursor}`).expect(200);
    expect(next.body.transitions[0].id).not.toBe(page.body.transitions[1].id);
  });

  it('exposes the state, transitions and provider calls as Prometheus metrics', async () => {
    await fullCycle(broker);
    const res = await request(broker.url).get('/metrics').expect(200);
    expect(res.text).toContain('cpaas_breaker_state{provider="primary"} 0');
    expect(res.text).toContain('cpaas_breaker_state{provider="failover"} 0');
    expect(res.text).toMatch(/cpaas_breaker_transitions_total\{provider="primary",from="CLOSED",to="OPEN"\} 1/);
    expect(res.text).toMatch(
      /cpaas_provider_calls_total\{provider="primary",operation="bind",outcome="transport",counts_against_provider="true"\} \d+/,
    );
    expect(res.text).toMatch(/cpaas_health_probes_total\{provider="primary",result="pass"\} \d+/);
    expect(res.text).toContain('cpaas_provider_call_duration_seconds_bucket');
  });

  it('lets an operator disable and enable a provider, separately from its breaker', async () => {
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    await request(broker.url).post('/v1/admin/providers/primary/disable').send({ reason: 'maintenance' }).expect(401);
    const disabled = await request(broker.url)
      .post('/v1/admin/providers/primary/disable')
      .set(auth)
      .send({ reason: 'maintenance' })
      .expect(200);
    expect(disabled.body).toMatchObject({ name: 'primary', state: 'CLOSED', disabled: true, disabledReason: 'maintenance' });
    expect((await primary(broker)).disabled).toBe(true);
    expect((await createWith(broker, 'ok')).provider).toBe('failover');
    const ready = await request(broker.url).get('/health/ready').expect(200);
    expect(ready.body.details.providers.providers.primary).toEqual({ state: 'CLOSED', disabled: true, scope: 'cluster' });

    await request(broker.url).post('/v1/admin/providers/primary/enable').set(auth).expect(200);
    expect((await createWith(broker, 'ok')).provider).toBe('primary');
    await request(broker.url).post('/v1/admin/providers/nope/disable').set(auth).send({}).expect(404);
  });
});

describe('window error-rate rule over the API', () => {
  let broker: BrokerHarness;

  beforeAll(async () => {
    broker = await startBroker(ENV);
  });
  afterAll(() => broker.close());

  it('does not trip on exactly 10 % with enough calls, and trips just over it', async () => {
    for (let i = 0; i < 4; i++) await createWith(broker, 'ok');
    await createWith(broker, 'error'); // 1 failure in 5 calls: under the 10-call minimum
    expect(await primary(broker)).toMatchObject({ state: 'CLOSED' });
    for (let i = 0; i < 5; i++) await createWith(broker, 'ok'); // 1 of 10 = exactly 10 %
    expect(await primary(broker)).toMatchObject({ state: 'CLOSED', consecutiveFailures: 0 });

    expect((await createWith(broker, 'error')).provider).toBe('failover'); // 2 of 11 > 10 %
    const open = await primary(broker);
    expect(open.state).toBe('OPEN');
    expect(open.lastError).toMatch(/503/);
  });
});

describe('reject (200 without an id)', () => {
  it('trips the breaker like an error does', async () => {
    const broker = await startBroker(ENV);
    try {
      for (let i = 0; i < 5; i++) expect((await createWith(broker, 'reject')).provider).toBe('failover');
      const open = await primary(broker);
      expect(open.state).toBe('OPEN');
      expect(open.lastError).toMatch(/primary/);
    } finally {
      await broker.close();
    }
  });
});

describe('a restart mid-outage', () => {
  it('comes back OPEN with the same openedAt', async () => {
    const sim = await startSimulator();
    const first = await startBroker(ENV, { sim });
    for (let i = 0; i < 5; i++) await createWith(first, 'down');
    const before = await primary(first);
    expect(before.state).toBe('OPEN');
    await first.app.close();

    const second = await startBroker(ENV, { sim, db: first.db });
    try {
      const after = await primary(second);
      expect(after).toMatchObject({ state: 'OPEN', openedAt: before.openedAt, lastError: before.lastError });
      expect((await createWith(second, 'down')).provider).toBe('failover');
    } finally {
      await second.close();
      await first.db.drop();
      await sim.app.close();
    }
  });
});

describe('GET /v1/health/cpaas is served from memory', () => {
  it('answers while the database refuses every connection', async () => {
    const broker = await startBroker(ENV);
    const admin = new Client({ connectionString: broker.db.url.replace(/\/[^/]+$/, '/postgres') });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${broker.db.name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        broker.db.name,
      ]);
      await request(broker.url).get('/health/ready').expect(503);
      const res = await request(broker.url).get('/v1/health/cpaas').expect(200);
      expect(res.body.providers[0]).toMatchObject({ name: 'primary', state: 'CLOSED' });
      // Meanwhile a create is told to retry, not that the broker is broken.
      const create = await createSession(broker.url, sessionBody(freshPair()));
      expect(create.status).toBe(503);
      expect(create.headers['retry-after']).toBe('5');
      expect(create.body).toMatchObject({ type: '/problems/database-unavailable', title: 'Database unavailable' });
    } finally {
      await admin.query(`ALTER DATABASE ${broker.db.name} ALLOW_CONNECTIONS true`);
      await admin.end();
      await broker.close();
    }
  });
});

describe('GET /v1/health/cpaas/stream', () => {
  it('streams a snapshot at once, then each state change as it happens', async () => {
    const broker = await startBroker({ ...ENV, BREAKER_CONSECUTIVE_FAILURES: '1' });
    const controller = new AbortController();
    try {
      const res = await fetch(`${broker.url}/v1/health/cpaas/stream`, { signal: controller.signal });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      let text = '';
      const readUntil = async (pattern: RegExp) => {
        for (let i = 0; i < 200 && !pattern.test(text); i++) {
          text += new TextDecoder().decode((await reader.read()).value);
        }
        expect(text).toMatch(pattern);
      };
      await readUntil(/event: snapshot\nid: \d+\ndata: \{"providers"/);
      await createWith(broker, 'down');
      await readUntil(/event: transition\nid: \d+\ndata: \{"provider":"primary","from":"CLOSED","to":"OPEN"/);
      expect(text).toMatch(/event: provider\nid: \d+\ndata: \{"name":"primary","state":"OPEN"/);
    } finally {
      controller.abort();
      await broker.close();
    }
  });
});
