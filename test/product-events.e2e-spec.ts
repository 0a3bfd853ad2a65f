/**
 * The events the broker emits itself, each produced by its real cause (a breaker transition, the
 * sweeper, an SMS relay, a bridged call's status webhook) and received, signed, by a real endpoint
 * through the delivery worker: nothing is written into the outbox by the test.
 */
import request from 'supertest';
import { verifyWebhook } from '@app/sdk';
import { WebhookReceiver } from '@app/testing';
import { SessionSweeper } from '../apps/broker/src/sessions/session-sweeper';
import { DataSource } from 'typeorm';
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault, simInbound } from './support/sim-control';

const OPS_SECRET = 'ops-secret-0123456789abcdef';

interface Delivered {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

describe('events the broker emits, delivered by the worker', () => {
  let broker: BrokerHarness;
  let receiver: WebhookReceiver;
  let secret: string;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    broker = await startBroker({
      ...AUTH_ENV,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      OPS_WEBHOOK_URL: `${receiver.url}/ops`,
      OPS_WEBHOOK_SECRET: OPS_SECRET,
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      PROVIDER_CALL_TIMEOUT_MS: '300',
      RELAY_RETRY_INTERVAL_MS: '3600000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
    const set = await request(broker.url)
      .put('/v1/account/callback-url')
      .set('authorization', `Bearer ${API_KEY}`)
      .send({ callbackUrl: receiver.url })
      .expect(200);
    secret = set.body.webhookSecret as string;
  });
  afterAll(async () => {
    await broker?.close();
    await receiver?.close();
  });

  /** Waits (bounded) for a delivered event on `path` that `match` accepts; checks its signature with `key`. */
  async function delivered(path: string, key: string, match: (event: Delivered) => boolean): Promise<Delivered> {
    let found: Delivered | undefined;
    await eventually(async () => {
      for (const got of receiver.received.filter((r) => r.path === path)) {
        const event = verifyWebhook<Delivered>({ payload: got.body, headers: got.headers, secret: key }).body;
        if (match(event)) found = event;
      }
      return found !== undefined;
    });
    return found!;
  }

  it('sends provider.state_changed to the ops URL when the primary breaker opens', async () => {
    await setFault(broker.sim.url, 'primary', { mode: 'down' });
    try {
      for (let i = 0; i < 5; i++) await createSession(broker.url, sessionBody(freshPair())).expect(201);
    } finally {
      await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    }
    const event = await delivered('/hooks/ops', OPS_SECRET, (e) => e.type === 'provider.state_changed');
    expect(event.data).toMatchObject({ provider: 'primary', from: 'CLOSED', to: 'OPEN', lastError: expect.stringMatching(/^primary: /) });
  });

  it('sends session.expired when the sweeper expires a session', async () => {
    const session = (await createSession(broker.url, sessionBody(freshPair(), { ttlSeconds: 60 })).expect(201)).body;
    const db = broker.app.get(DataSource);
    await db.query(
      `UPDATE sessions SET expires_at = now() - interval '1 second', inactive_at = now() - interval '1 second' WHERE id = $1`,
      [session.id],
    );
    await db.query(`UPDATE session_participants SET expires_at = now() - interval '1 second' WHERE session_id = $1`, [session.id]);
    await broker.app.get(SessionSweeper).sweep();
    const event = await delivered(
      '/hooks',
      secret,
      (e) => e.type === 'session.expired' && (e.data.session as { id: string }).id === session.id,
    );
    expect(event.data.session).toMatchObject({ id: session.id, status: 'expired', expiredReason: 'ttl' });
  });

  it('sends message.relayed when an inbound SMS is relayed', async () => {
    const [rider, driver] = freshPair();
    const session = (await createSession(broker.url, sessionBody([rider, driver])).expect(201)).body;
    const answer = await simInbound(broker.sim.url, session.provider, { channel: 'sms', from: rider, to: session.proxyNumber, text: 'hi' });
    expect(answer.body).toMatchObject({ result: 'relayed' });
    const event = await delivered('/hooks', secret, (e) => e.type === 'message.relayed' && e.data.sessionId === session.id);
    expect(event.data).toMatchObject({ sessionId: session.id, from: rider, to: driver, attempts: 1 });
  });

  it('sends call.completed when the provider reports a bridged call completed', async () => {
    const [caller, callee] = freshPair();
    const session = (await createSession(broker.url, sessionBody([caller, callee], { channel: 'voice' })).expect(201)).body;
    const toggle = (enabled: boolean) =>
      fetch(`${broker.sim.url}/_sim/providers/${session.provider}/status-webhooks`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ enabled }),
      });
    expect((await toggle(true)).ok).toBe(true);
    try {
      const answer = await simInbound(broker.sim.url, session.provider, { channel: 'voice', from: caller, to: session.proxyNumber });
      expect(answer.status).toBe(200);
      const event = await delivered('/hooks', secret, (e) => e.type === 'call.completed' && e.data.sessionId === session.id);
      expect(event.data).toMatchObject({ sessionId: session.id, from: caller, to: callee, answer: 'completed' });
    } finally {
      await toggle(false);
    }
  });
});
