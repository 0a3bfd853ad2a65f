/**
 * The broker's log as an operator reads it, through the whole app: a request's id is echoed, and a
 * failover inside a create is one warning naming that request, its key and the provider that failed
 * (docs/operations.md#logging). The log lines are captured (JSON) instead of written to stdout.
 */
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { setFault } from './support/sim-control';

describe('the broker log', () => {
  let broker: BrokerHarness;
  const written: string[] = [];
  const lines = () => written.map((line) => JSON.parse(line) as Record<string, unknown>);

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV, LOG_LEVEL: 'warn' }, { logs: { write: (line) => void written.push(line) } });
  });
  afterAll(() => broker.close());

  it("names the request, its key and the failed provider in the failover warning, and echoes the request's id", async () => {
    await setFault(broker.sim.url, 'primary', { mode: 'down' });
    try {
      const res = await createSession(broker.url, sessionBody(freshPair()), API_KEY, 'key-logged-failover').set(
        'x-request-id',
        'req-e2e-failover',
      );
      expect(res.status).toBe(201);
      expect(res.body.provider).toBe('failover');
      expect(res.headers['x-request-id']).toBe('req-e2e-failover');
      const failovers = lines().filter((line) => typeof line.msg === 'string' && line.msg.startsWith('binding on primary failed'));
      expect(failovers).toEqual([
        expect.objectContaining({
          level: 40,
          context: 'SessionsService',
          reqId: 'req-e2e-failover',
          idempotencyKey: 'key-logged-failover',
          provider: 'primary',
          sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
          accountId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        }),
      ]);
      expect(failovers[0].sessionId).not.toBe(res.body.id);
    } finally {
      await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    }
  });
});
