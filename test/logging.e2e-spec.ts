/**
 * The broker's log as an operator reads it, through the whole app: a request's id is echoed, and a
 * failover inside a create is one warning naming that request, its key and the provider that failed
 * (docs/operations.md#logging). The log lines are captured (JSON) instead of written to stdout.
 */
import request from 'supertest';
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

  it('keeps credentials under any name out of the log: headers and query parameters outside the allow-list (issue #29)', async () => {
    await request(broker.url)
      .get('/v1/sessions?bearer=q-bearer-0001&limit=5')
      .set('x-api-key', 'h-x-api-key-0001')
      .set('proxy-authorization', 'Basic aC1wcm94eS0wMDAx')
      .set('x-auth-token', 'h-x-auth-token-0001')
      .set('x-request-id', 'req-e2e-credentials')
      .expect(401);
    // A refused webhook: its signature header is not logged either.
    await request(broker.url)
      .post('/v1/providers/primary/inbound/sms')
      .set('x-twilio-signature', 'h-twilio-signature-0001')
      .set('x-sim-signature', 'h-sim-signature-0001')
      .set('x-request-id', 'req-e2e-webhook')
      .send({ from: '+2348030000001', to: '+2349010000001', text: 'hi' });
    const text = written.join('');
    for (const secret of [
      'q-bearer-0001',
      'h-x-api-key-0001',
      'aC1wcm94eS0wMDAx',
      'h-x-auth-token-0001',
      'h-twilio-signature-0001',
      'h-sim-signature-0001',
    ])
      expect(text).not.toContain(secret);
    const completion = lines().find((line) => (line.req as { id?: string } | undefined)?.id === 'req-e2e-credentials');
    expect(completion).toMatchObject({
      res: { statusCode: 401 },
      req: { url: '/v1/sessions?bearer=[REDACTED]&limit=5', headers: expect.objectContaining({ 'x-api-key': '[REDACTED]' }) },
    });
    expect(lines().some((line) => (line.req as { id?: string } | undefined)?.id === 'req-e2e-webhook')).toBe(true);
  });
});
