/**
 * `GET /v1/health/cpaas` is served from memory (docs/design.md#provider-breaker): polling it runs no database query. Every
 * query the broker sends goes through node-postgres' `Client.prototype.query`, which is counted here;
 * `/health/ready`, which pings the database, shows the counter does see the broker's queries.
 * (test/providers.e2e-spec.ts shows the route answering while the database refuses connections.)
 */
import { jest } from '@jest/globals';
import pg from 'pg';
import request from 'supertest';
import { BREAKER_OUTCOME_CHANNEL } from '../apps/broker/src/providers/cluster/breaker-outcomes';
import { AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault } from './support/sim-control';

const QUIET = {
  ...AUTH_ENV,
  // No scheduled work during the counted requests.
  BREAKER_HEALTH_INTERVAL_MS: '3600000',
  SESSION_SWEEP_INTERVAL_MS: '3600000',
  RELAY_RETRY_INTERVAL_MS: '3600000',
  WEBHOOK_POLL_INTERVAL_MS: '3600000',
  WEBHOOK_LEASE_MS: '3600000',
  POOL_USAGE_REFRESH_MS: '0',
};

describe('GET /v1/health/cpaas runs no database query', () => {
  let broker: BrokerHarness;

  beforeAll(async () => {
    broker = await startBroker(QUIET);
  });
  afterAll(() => broker.close());

  /**
   * The SQL text of every query node-postgres sends while `work` runs, but for the NOTIFY batches of call
   * outcomes that earlier creates left on their 20 ms timer (every replica sends its own to the others).
   */
  async function queriesDuring(work: () => Promise<void>): Promise<string[]> {
    const spy = jest.spyOn(pg.Client.prototype, 'query');
    try {
      await work();
      return spy.mock.calls
        .filter(([, values]) => !(Array.isArray(values) && values[0] === BREAKER_OUTCOME_CHANNEL))
        .map(([config]) => (typeof config === 'string' ? config : String((config as { text?: string })?.text)));
    } finally {
      spy.mockRestore();
    }
  }

  async function poll(times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      const res = await request(broker.url).get('/v1/health/cpaas').expect(200);
      expect(res.body.providers).toHaveLength(2);
    }
  }

  it('counts the queries the broker sends (readiness pings the database)', async () => {
    const queries = await queriesDuring(async () => {
      await request(broker.url).get('/health/ready').expect(200);
    });
    expect(queries.length).toBeGreaterThan(0);
  });

  it('sends none for 200 polls while every breaker is CLOSED', async () => {
    expect(await queriesDuring(() => poll(200))).toEqual([]);
  });

  it('sends none while the primary is OPEN, with openedAt and lastError to report', async () => {
    await setFault(broker.sim.url, 'primary', { mode: 'down' });
    for (let i = 0; i < 5; i++) await createSession(broker.url, sessionBody(freshPair())).expect(201);
    const res = await request(broker.url).get('/v1/health/cpaas').expect(200);
    expect(res.body.providers[0]).toMatchObject({ name: 'primary', state: 'OPEN' });
    // The transition is persisted after the fact: let that write finish before counting.
    await eventually(async () => {
      const history = await request(broker.url).get('/v1/health/cpaas/history?provider=primary').expect(200);
      return history.body.transitions.length === 1;
    });
    expect(await queriesDuring(() => poll(200))).toEqual([]);
  });
});
