/**
 * Relay of calls and messages through a session's proxy number, driven as a phone user would:
 * the simulator delivers signed inbound webhooks to the broker, which relays through the
 * session's own provider.
 */
import { signSimWebhook } from '@app/cpaas';
import { Client } from 'pg';
import request from 'supertest';
import { RelayWorker } from '../apps/broker/src/relay/relay-worker';
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { TEST_WEBHOOK_SECRET, startBroker, startSimulator, type BrokerHarness } from './support/broker-harness';
import { clearSimCalls, setFault, simCalls, simInbound } from './support/sim-control';

/** The route the tests below sign their hand-made webhooks for. */
const SMS_ROUTE = { provider: 'primary', method: 'POST', path: '/v1/providers/primary/inbound/sms' };

async function interactions(
  broker: BrokerHarness,
  sessionId: string,
): Promise<Array<{ channel: string; from: string; to: string; status: string }>> {
  const res = await request(broker.url).get(`/v1/sessions/${sessionId}/interactions`).set('authorization', `Bearer ${API_KEY}`).expect(200);
  return res.body.interactions;
}

// Each test starts from its own broker and simulator (breakers CLOSED, faults off), so any one runs alone.
describe('relay', () => {
  let broker: BrokerHarness;
  let db: Client;

  beforeEach(async () => {
    broker = await startBroker({ ...AUTH_ENV, RELAY_RETRY_INTERVAL_MS: '3600000', SESSION_SWEEP_INTERVAL_MS: '3600000' });
    db = new Client(broker.db.url);
    await db.connect();
  });
  afterEach(async () => {
    await db.end();
    await broker.close();
  });

  it('relays an SMS to the other participant through the proxy number, and records it', async () => {
    const [rider, driver] = freshPair();
    const session = (await createSession(broker.url, sessionBody([rider, driver])).expect(201)).body;
    await clearSimCalls(broker.sim.url, 'primary');

    const answer = await simInbound(broker.sim.url, 'primary', {
      channel: 'sms',
      from: rider,
      to: session.proxyNumber,
      text: 'I am at the gate',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ result: 'relayed' });

    const sent = await simCalls(broker.sim.url, 'primary', 'sms');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ from: session.proxyNumber, to: driver, text: 'I am at the gate' });
    expect(await interactions(broker, session.id)).toEqual([
      expect.objectContaining({ channel: 'sms', from: rider, to: driver, status: 'relayed' }),
    ]);
  });

  it('relays through the session’s own provider', async () => {
    await setFault(broker.sim.url, 'primary', { mode: 'error' });
    const [a, b] = freshPair();
    const session = (await createSession(broker.url, sessionBody([a, b])).expect(201)).body;
    expect(session.provider).toBe('failover');
    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    await clearSimCalls(broker.sim.url, 'failover');
    await clearSimCalls(broker.sim.url, 'primary');

    const answer = await simInbound(broker.sim.url, 'failover', { channel: 'sms', from: b, to: session.proxyNumber, text: 'on my way' });
    expect(answer.status).toBe(200);
    expect(await simCalls(broker.sim.url, 'failover', 'sms')).toEqual([expect.objectContaining({ from: session.proxyNumber, to: a })]);
    expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([]);
  });

  it('bridges a call with the proxy number as caller id, and completes it from the status webhook', async () => {
    const [caller, callee] = freshPair();
    const session = (await createSession(broker.url, sessionBody([caller, callee], { channel: 'voice' })).expect(201)).body;
    await clearSimCalls(broker.sim.url, 'primary');

    const answer = await simInbound(broker.sim.url, 'primary', { channel: 'voice', from: caller, to: session.proxyNumber });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ action: 'bridge', to: callee, callerId: session.proxyNumber });
    expect(await simCalls(broker.sim.url, 'primary', 'call')).toEqual([expect.objectContaining({ from: session.proxyNumber, to: callee })]);
    expect(await interactions(broker, session.id)).toEqual([
      expect.objectContaining({ channel: 'voice', from: caller, to: callee, status: 'completed' }),
    ]);
  });

  it('refuses an unsigned or forged webhook with 401 and relays nothing', async () => {
    const [a, b] = freshPair();
    const session = (await createSession(broker.url, sessionBody([a, b])).expect(201)).body;
    await clearSimCalls(broker.sim.url, 'primary');
    const body = JSON.stringify({
      eventId: 'evt-forged-1',
      messageId: 'm-1',
      from: a,
      to: session.proxyNumber,
      text: 'hi',
      at: new Date().toISOString(),
    });

    const unsigned = await request(broker.url).post('/v1/providers/primary/inbound/sms').set('content-type', 'application/json').send(body);
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers['content-type']).toMatch(/^application\/problem\+json/);
    const forged = signSimWebhook('not-the-secret', SMS_ROUTE, body, Math.floor(Date.now() / 1000));
    await request(broker.url)
      .post('/v1/providers/primary/inbound/sms')
      .set(forged)
      .set('content-type', 'application/json')
      .send(body)
      .expect(403);
    const stale = signSimWebhook(TEST_WEBHOOK_SECRET, SMS_ROUTE, body, Math.floor(Date.now() / 1000) - 3600);
    await request(broker.url)
      .post('/v1/providers/primary/inbound/sms')
      .set(stale)
      .set('content-type', 'application/json')
      .send(body)
      .expect(403);
    // A genuine signature, made for another provider's or another route's webhook, does not carry over.
    const now = Math.floor(Date.now() / 1000);
    const forFailover = signSimWebhook(
      TEST_WEBHOOK_SECRET,
      { ...SMS_ROUTE, provider: 'failover', path: '/v1/providers/failover/inbound/sms' },
      body,
      now,
    );
    const forVoice = signSimWebhook(TEST_WEBHOOK_SECRET, { ...SMS_ROUTE, path: '/v1/providers/primary/inbound/voice' }, body, now);
    for (const headers of [forFailover, forVoice]) {
      const res = await request(broker.url)
        .post('/v1/providers/primary/inbound/sms')
        .set(headers)
        .set('content-type', 'application/json')
        .send(body);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 403, type: expect.stringContaining('invalid-signature') });
    }
    // Nor does a crafted Host header move the check onto the route the signature was made for (issue #29):
    // without PUBLIC_URL the signature is bound to the route the request was routed to, not to a URL rebuilt from Host.
    const origin = new URL(broker.url).host;
    for (const host of [`${origin}/v1/providers/primary/inbound/voice#`, `${origin}/v1/providers/primary/inbound/voice?`]) {
      const res = await request(broker.url)
        .post('/v1/providers/primary/inbound/sms')
        .set(forVoice)
        .set('host', host)
        .set('content-type', 'application/json')
        .send(body);
      expect({ host, status: res.status }).toEqual({ host, status: 403 });
    }

    expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([]);
    expect(await interactions(broker, session.id)).toEqual([]);
  });

  it('relays a webhook delivered twice only once', async () => {
    const [a, b] = freshPair();
    const session = (await createSession(broker.url, sessionBody([a, b])).expect(201)).body;
    await clearSimCalls(broker.sim.url, 'primary');
    const body = JSON.stringify({
      eventId: 'evt-dup-1',
      messageId: 'm-dup-1',
      from: a,
      to: session.proxyNumber,
      text: 'once',
      at: new Date().toISOString(),
    });
    for (let i = 0; i < 2; i++) {
      const headers = signSimWebhook(TEST_WEBHOOK_SECRET, SMS_ROUTE, body, Math.floor(Date.now() / 1000));
      await request(broker.url)
        .post('/v1/providers/primary/inbound/sms')
        .set(headers)
        .set('content-type', 'application/json')
        .send(body)
        .expect(200);
    }
    expect(await simCalls(broker.sim.url, 'primary', 'sms')).toHaveLength(1);
    expect(await interactions(broker, session.id)).toHaveLength(1);
  });

  it('answers a bad webhook body with a 400 problem naming the field', async () => {
    const body = JSON.stringify({ eventId: 'evt-bad-1', from: 'nobody', at: 'x' });
    const headers = signSimWebhook(TEST_WEBHOOK_SECRET, SMS_ROUTE, body, Math.floor(Date.now() / 1000));
    const res = await request(broker.url)
      .post('/v1/providers/primary/inbound/sms')
      .set(headers)
      .set('content-type', 'application/json')
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body.errors.length).toBeGreaterThan(0);
  });

  it('keeps a failed relay and retries it until it goes through', async () => {
    const [a, b] = freshPair();
    const session = (await createSession(broker.url, sessionBody([a, b])).expect(201)).body;
    await setFault(broker.sim.url, 'primary', { mode: 'error' });
    const answer = await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: a, to: session.proxyNumber, text: 'kept' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ result: 'queued' });
    expect(await interactions(broker, session.id)).toEqual([expect.objectContaining({ status: 'pending' })]);

    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    await clearSimCalls(broker.sim.url, 'primary');
    await db.query(`UPDATE interactions SET next_attempt_at = now() WHERE session_id = $1`, [session.id]);
    await broker.app.get(RelayWorker).run();
    expect(await interactions(broker, session.id)).toEqual([expect.objectContaining({ status: 'relayed' })]);
    expect(await simCalls(broker.sim.url, 'primary', 'sms')).toEqual([expect.objectContaining({ to: b, text: 'kept' })]);

    // Its event says when the broker got the message (to order by), not when the retry relayed it.
    const [{ created_at: inboundAt }] = (
      await db.query<{ created_at: Date }>('SELECT created_at FROM interactions WHERE session_id = $1', [session.id])
    ).rows;
    const { rows } = await db.query<{ data: { receivedAt: string }; created_at: Date }>(
      `SELECT data, created_at FROM webhook_events WHERE session_id = $1 AND type = 'message.relayed'`,
      [session.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].data.receivedAt).toBe(inboundAt.toISOString());
    expect(rows[0].created_at.getTime()).toBeGreaterThan(inboundAt.getTime());
  });

  it('gives a pending relay up, as message.failed, once its session has ended', async () => {
    const [a, b] = freshPair();
    const session = (await createSession(broker.url, sessionBody([a, b])).expect(201)).body;
    await setFault(broker.sim.url, session.provider, { mode: 'error' });
    const queued = await simInbound(broker.sim.url, session.provider, {
      channel: 'sms',
      from: a,
      to: session.proxyNumber,
      text: 'too late',
    });
    expect(queued.body).toMatchObject({ result: 'queued' });
    await setFault(broker.sim.url, session.provider, { mode: 'ok' });
    await request(broker.url).delete(`/v1/sessions/${session.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
    await db.query(`UPDATE interactions SET next_attempt_at = now() WHERE session_id = $1`, [session.id]);
    await broker.app.get(RelayWorker).run();

    expect(await interactions(broker, session.id)).toEqual([expect.objectContaining({ status: 'failed' })]);
    const { rows } = await db.query<{ type: string; data: { receivedAt?: string } }>(
      `SELECT type, data FROM webhook_events WHERE session_id = $1 ORDER BY created_at`,
      [session.id],
    );
    expect(rows.map((r) => r.type)).toEqual(['session.created', 'session.closed', 'message.failed']);
    // Every event's data says when the broker learned of it: the create, the DELETE, the inbound message.
    const [{ created_at: createdAt, ended_at: endedAt }] = (
      await db.query<{ created_at: Date; ended_at: Date }>('SELECT created_at, ended_at FROM sessions WHERE id = $1', [session.id])
    ).rows;
    const [{ created_at: inboundAt }] = (
      await db.query<{ created_at: Date }>('SELECT created_at FROM interactions WHERE session_id = $1', [session.id])
    ).rows;
    expect(rows.map((r) => r.data.receivedAt)).toEqual([createdAt.toISOString(), endedAt.toISOString(), inboundAt.toISOString()]);
  });

  it('rejects a sender with no active session by default', async () => {
    const res = await simInbound(broker.sim.url, 'primary', {
      channel: 'sms',
      from: '+2348099999999',
      to: '+2349010000001',
      text: 'hello?',
    });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ title: 'No active session' });
  });
});

describe('relay with an out-of-session message configured', () => {
  it('answers the sender with the configured text', async () => {
    const sim = await startSimulator();
    const broker = await startBroker({ ...AUTH_ENV, OUT_OF_SESSION_REPLY: 'This number is no longer in use.' }, { sim });
    try {
      const sms = await simInbound(sim.url, 'primary', { channel: 'sms', from: '+2348099999998', to: '+2349010000002', text: 'hello?' });
      expect(sms.status).toBe(200);
      expect(await simCalls(sim.url, 'primary', 'sms')).toEqual([
        expect.objectContaining({ from: '+2349010000002', to: '+2348099999998', text: 'This number is no longer in use.' }),
      ]);
      const call = await simInbound(sim.url, 'primary', { channel: 'voice', from: '+2348099999998', to: '+2349010000002' });
      expect(call.body).toEqual({ action: 'say', text: 'This number is no longer in use.' });
    } finally {
      await broker.close();
      await sim.app.close();
    }
  });
});
