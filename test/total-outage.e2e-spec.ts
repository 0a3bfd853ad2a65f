/**
 * Every provider failing at once, against the real simulator: a create answers one 503 problem naming
 * each provider tried and why, leaves no reservation, and counts in `broker_sessions_failed_total`;
 * once every breaker is OPEN (panic mode) each enabled provider is still tried, in order, so the
 * first one back serves the create.
 */
import { Client } from 'pg';
import request from 'supertest';
import { AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { clearSimCalls, setFault, simCalls } from './support/sim-control';

const PROVIDERS = ['primary', 'failover'];

describe('total outage: every provider failing', () => {
  let broker: BrokerHarness;
  let db: Client;

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      BREAKER_HEALTH_INTERVAL_MS: '3600000', // no health check moves a breaker during the test
      // No fault here hangs ('down' answers at once): a deadline a loaded machine's healthy answers cannot miss.
      PROVIDER_CALL_TIMEOUT_MS: '5000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
    db = new Client(broker.db.url);
    await db.connect();
    for (const provider of PROVIDERS) await setFault(broker.sim.url, provider, { mode: 'down' });
  });
  afterAll(async () => {
    await db.end();
    await broker.close();
  });

  async function failedTotal(reason: string): Promise<number> {
    const res = await request(broker.url).get('/metrics').expect(200);
    const line = res.text.split('\n').find((l) => l.startsWith(`broker_sessions_failed_total{reason="${reason}"} `));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  }

  async function states(): Promise<string[]> {
    const res = await request(broker.url).get('/v1/health/cpaas').expect(200);
    return PROVIDERS.map((name) => res.body.providers.find((p: { name: string }) => p.name === name).state);
  }

  async function sessionRows(pair: [string, string]): Promise<number> {
    const { rows } = await db.query('SELECT count(*)::int AS n FROM sessions WHERE participants = $1', [pair]);
    return rows[0].n;
  }

  it('answers 503 naming each provider tried once and why, leaving no reservation, counted by reason', async () => {
    const before = await failedTotal('providers-failed');
    const pair = freshPair();
    const res = await createSession(broker.url, sessionBody(pair)).expect(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: '/problems/providers-failed', status: 503 });
    expect(res.body.attempts).toEqual(PROVIDERS.map((provider) => ({ provider, outcome: expect.any(String) })));
    for (const { provider, outcome } of res.body.attempts) {
      expect(res.body.detail.split(provider).length - 1).toBe(1);
      expect(res.body.detail).toContain(`${provider}: ${outcome}`);
    }
    expect(await sessionRows(pair)).toBe(0);
    expect(await failedTotal('providers-failed')).toBe(before + 1);
  });

  it('still tries every enabled provider in order once every breaker is OPEN, and the first one back serves', async () => {
    for (let i = 0; i < 5 && (await states()).some((s) => s !== 'OPEN'); i++) {
      await createSession(broker.url, sessionBody(freshPair())).expect(503);
    }
    expect(await states()).toEqual(['OPEN', 'OPEN']);

    for (const provider of PROVIDERS) await clearSimCalls(broker.sim.url, provider);
    const pair = freshPair();
    const refused = await createSession(broker.url, sessionBody(pair)).expect(503);
    expect(refused.body.attempts.map((a: { provider: string }) => a.provider)).toEqual(PROVIDERS);
    for (const provider of PROVIDERS) expect(await simCalls(broker.sim.url, provider, 'bind')).toHaveLength(1);
    expect(await sessionRows(pair)).toBe(0);

    await setFault(broker.sim.url, 'failover', { mode: 'ok' });
    for (const provider of PROVIDERS) await clearSimCalls(broker.sim.url, provider);
    const made = await createSession(broker.url, sessionBody(freshPair())).expect(201);
    expect(made.body.provider).toBe('failover');
    const [primaryBind] = await simCalls(broker.sim.url, 'primary', 'bind');
    const [failoverBind] = await simCalls(broker.sim.url, 'failover', 'bind');
    expect(primaryBind.at <= failoverBind.at).toBe(true);
  });
});
