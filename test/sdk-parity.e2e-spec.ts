/**
 * Every public method of the SDK against the running broker and simulator, as an integrator's backend
 * uses them on day one: the account's callback URL and its secret, a rotation, sessions, the events each
 * change sends (received by the documented example receiver and verified by `constructEvent`, typed by
 * `type`), the event history page by page and one delivery with its attempts. Errors carry the request
 * id the broker logged the call under. Session rescue: its setting, and the rebound it sends.
 */
import { jest } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BrokerClient,
  BrokerConflictError,
  BrokerNetworkError,
  BrokerNotFoundError,
  BrokerValidationError,
  constructInterceptRequest,
  type BrokerEvent,
  type InterceptRequest,
  type CreateSessionInput,
  type Participant,
  type WebhookEvent,
} from '@session-broker/sdk';
import { describeEvent, webhookReceiver } from '../libs/sdk/examples/webhook-receiver';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually, freePort } from './support/processes';
import { SessionRescue } from '../apps/broker/src/rescue/session-rescue';
import { setFault, simInbound } from './support/sim-control';

jest.setTimeout(90_000);

const API_KEY = 'sdk-parity-api-key-0001';

let nextNumber = 0;
function participants(): Participant[] {
  // A list built elsewhere (not a tuple literal) is accepted by the type.
  return [0, 1].map(() => ({ number: `+23480310${String(10000 + nextNumber++).padStart(5, '0')}` }));
}

describe('SDK parity with the API, against the running broker', () => {
  let broker: BrokerHarness;
  let client: BrokerClient;
  const received: WebhookEvent[] = [];
  const refused: string[] = [];
  let receiver: ReturnType<typeof webhookReceiver>;
  // Read by the receiver on each request: empty until the account has a secret.
  const secrets: string[] = [];

  beforeAll(async () => {
    broker = await startBroker({ BROKER_API_KEY: API_KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' });
    client = new BrokerClient({ baseUrl: broker.url, apiKey: API_KEY, userAgent: 'parity-test/1.0' });
    // The receiver the docs show.
    receiver = webhookReceiver(
      secrets,
      (event) => received.push(event),
      (reason) => refused.push(reason),
    );
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  });

  afterAll(async () => {
    receiver?.closeAllConnections();
    await new Promise<void>((done) => (receiver ? receiver.close(() => done()) : done()));
    await broker?.close();
  });

  function waitFor<T extends WebhookEvent['type']>(type: T, sessionId: string): Promise<Extract<WebhookEvent, { type: T }>> {
    const match = (): Extract<WebhookEvent, { type: T }> | undefined =>
      received.find(
        (event): event is Extract<WebhookEvent, { type: T }> =>
          event.type === type &&
          ('session' in event.data ? event.data.session.id : (event.data as { sessionId?: string | null }).sessionId) === sessionId,
      );
    return eventually(() => Promise.resolve(match() !== undefined), 300).then(() => match()!);
  }

  it('sets the callback URL (showing the secret), rotates it, and delivers every event type typed and verified', async () => {
    expect(await client.getCallbackUrl()).toEqual({ callbackUrl: null });
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/broker-events`;

    const set = await client.setCallbackUrl(callbackUrl);
    expect(set.callbackUrl).toBe(callbackUrl);
    expect(set.webhookSecret).toMatch(/^whsec_/);
    expect(await client.getCallbackUrl()).toEqual({ callbackUrl });

    const status = await client.getWebhookSecretStatus();
    expect(status).toMatchObject({ configured: true, revealed: true, previousSecretExpiresAt: null });
    // Shown once by the PUT: a reveal is refused from then on.
    expect(await client.revealWebhookSecret().catch((error: unknown) => error)).toBeInstanceOf(BrokerConflictError);
    const rotated = await client.rotateWebhookSecret();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(set.webhookSecret);
    expect(Date.parse(rotated.previousSecretExpiresAt!)).toBeGreaterThan(Date.parse(rotated.createdAt));
    expect((await client.getWebhookSecretStatus()).previousSecretExpiresAt).toBe(rotated.previousSecretExpiresAt);
    // Only the new secret: the deliveries carry a signature by each secret that signs now.
    secrets.push(rotated.secret);

    const input: CreateSessionInput = { channel: 'sms', participants: participants(), metadata: { ride: 'r-parity' } };
    const session = await client.createSession(input);
    const [a, b] = session.participants.map((p) => p.number);
    const created = await waitFor('session.created', session.id);
    expect(created.data.session).toEqual(await client.getSession(session.id));
    expect(created.data.session.metadata).toEqual({ ride: 'r-parity' });

    expect(
      (await simInbound(broker.sim.url, session.provider, { channel: 'sms', from: a, to: session.proxyNumber, text: 'hi' })).status,
    ).toBe(200);
    const relayed = await waitFor('message.relayed', session.id);
    const [interaction] = await client.listInteractions(session.id);
    expect(relayed.data).toEqual({
      sessionId: session.id,
      interactionId: interaction.id,
      from: a,
      to: b,
      attempts: 1,
      receivedAt: expect.any(String),
    });
    expect(describeEvent(relayed)).toContain(`${a} -> ${b}`);

    const voice = await client.createSession({ channel: 'voice', participants: participants() });
    const [caller, callee] = voice.participants.map((p) => p.number);
    await simInbound(broker.sim.url, voice.provider, { channel: 'voice', from: caller, to: voice.proxyNumber });
    const call = await waitFor('call.completed', voice.id);
    expect(call.data).toMatchObject({ sessionId: voice.id, from: caller, to: callee, answer: 'completed' });
    expect(typeof call.data.durationSec).toBe('number');

    const closed = await client.closeSession(session.id);
    expect((await waitFor('session.closed', session.id)).data.session).toEqual(closed);
    expect(refused).toEqual([]);

    // The history holds what was delivered, typed the same, newest first, over one-event pages.
    const history: BrokerEvent[] = [];
    for await (const event of client.listEvents({ session: session.id, limit: 1 })) history.push(event);
    expect(history.map((e) => e.type)).toEqual(['session.closed', 'message.relayed', 'session.created']);
    for (const event of history) {
      const delivered = received.find((r) => r.id === event.id)!;
      expect({ id: event.id, type: event.type, timestamp: event.timestamp, data: event.data }).toEqual(delivered);
      expect(event.sessionId).toBe(session.id);
    }
    const pages = [];
    for await (const page of client.listEventPages({ session: session.id, limit: 2 })) pages.push(page.events.length);
    expect(pages).toEqual([2, 1]);

    await eventually(async () => (await client.getDelivery(history[0].deliveries[0].id)).status === 'delivered');
    const delivery = await client.getDelivery(history[0].deliveries[0].id);
    expect(delivery).toMatchObject({ eventId: history[0].id, eventType: 'session.closed', sessionId: session.id, url: callbackUrl });
    expect(delivery.attempts[0]).toMatchObject({ number: 1, statusCode: 204, delivered: true, error: null });
    expect(delivery.endpoint).toMatchObject({ condition: 'healthy', breakerState: 'CLOSED' });

    expect(await client.setCallbackUrl(null)).toEqual({ callbackUrl: null });
  });

  it('runs a conversation: both channels, uniqueName, the app’s message, the intercept, and the interaction events typed', async () => {
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/broker-events`;
    await client.setCallbackUrl(callbackUrl);
    // The intercept the docs show: constructInterceptRequest, then 2xx to let through, 403 to block.
    const asked: InterceptRequest[] = [];
    const intercept = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const question = constructInterceptRequest(Buffer.concat(chunks), req.headers, secrets);
        asked.push(question);
        res.writeHead(question.data.interaction.text?.includes('0803') ? 403 : 204).end();
      });
    });
    await new Promise<void>((done) => intercept.listen(0, '127.0.0.1', done));
    try {
      const interceptUrl = `http://127.0.0.1:${(intercept.address() as AddressInfo).port}/intercept`;
      expect(await client.getInterceptUrl()).toEqual({ interceptUrl: null });
      expect(await client.setInterceptUrl(interceptUrl)).toEqual({ interceptUrl });
      expect(await client.getInterceptUrl()).toEqual({ interceptUrl });

      const session = await client.createSession({
        channels: ['voice', 'sms'],
        participants: participants(),
        uniqueName: 'parity-ride-1',
        idleTtlSeconds: 900,
      });
      expect(session).toMatchObject({ channels: ['voice', 'sms'], channel: null, uniqueName: 'parity-ride-1', idleTtlSeconds: 900 });
      const named: string[] = [];
      for await (const s of client.listSessions({ uniqueName: 'parity-ride-1' })) named.push(s.id);
      expect(named).toEqual([session.id]);
      const [rider, driver] = session.participants.map((p) => p.number);

      await simInbound(broker.sim.url, session.provider, { channel: 'sms', from: rider, to: session.proxyNumber, text: 'gate 2' });
      await waitFor('message.relayed', session.id);
      await simInbound(broker.sim.url, session.provider, { channel: 'sms', from: rider, to: session.proxyNumber, text: 'call me 0803…' });
      const blocked = await waitFor('interaction.blocked', session.id);
      expect(blocked.data).toMatchObject({ sessionId: session.id, channel: 'sms', from: rider, to: driver, outcome: 'blocked' });
      expect(describeEvent(blocked)).toContain('interaction.blocked');
      expect(asked.map((q) => [q.type, q.data.session.id, q.data.interaction.text])).toEqual([
        ['interaction.intercept', session.id, 'gate 2'],
        ['interaction.intercept', session.id, 'call me 0803…'],
      ]);

      const sent = await client.sendMessage(session.id, { to: rider, text: 'Your driver has arrived' }, { idempotencyKey: 'parity-msg-1' });
      expect(sent).toMatchObject({ channel: 'sms', from: session.proxyNumber, to: rider, status: 'relayed', replayed: false });
      const again = await client.sendMessage(
        session.id,
        { to: rider, text: 'Your driver has arrived' },
        { idempotencyKey: 'parity-msg-1' },
      );
      expect(again).toMatchObject({ id: sent.id, replayed: true, idempotencyKey: 'parity-msg-1' });
      expect((await client.listInteractions(session.id)).map((i) => i.status)).toEqual(['relayed', 'blocked', 'relayed']);

      // A call into an sms-only session is out of session: the account hears of it, typed.
      const texts = await client.createSession({ channel: 'sms', participants: participants() });
      await simInbound(broker.sim.url, texts.provider, { channel: 'voice', from: texts.participants[0].number, to: texts.proxyNumber });
      const stray = await waitFor('interaction.out_of_session', texts.id);
      expect(stray.data).toMatchObject({ reason: 'channel-not-in-session', channel: 'voice', sessionId: texts.id });
      expect(describeEvent(stray)).toContain('interaction.out_of_session');
    } finally {
      await client.setInterceptUrl(null);
      await client.setCallbackUrl(null);
      intercept.closeAllConnections();
      await new Promise<void>((done) => intercept.close(() => done()));
    }
  });

  it('lists sessions, reads the health, and streams it', async () => {
    const session = await client.createSession({ channel: 'sms', participants: participants() });
    const listed: string[] = [];
    for await (const s of client.listSessions({ status: 'active', limit: 1 })) listed.push(s.id);
    expect(listed).toContain(session.id);
    const pages = [];
    for await (const page of client.listSessionPages({ status: 'active', limit: 100 })) pages.push(page);
    expect(pages[0].sessions.map((s) => s.id)).toContain(session.id);

    expect((await client.getCpaasHealth()).providers.map((p) => p.name)).toEqual(['primary', 'failover']);
    for await (const event of client.watchCpaasHealth()) {
      expect(event.type).toBe('snapshot');
      break;
    }
  });

  it('turns session rescue on and off, and types the rebound a rescue sends', async () => {
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/broker-events`;
    await client.setCallbackUrl(callbackUrl);
    expect(await client.getRescue()).toEqual({ enabled: false, afterSeconds: null, notice: null });
    const notice = 'Keep texting this number to reach your driver.';
    expect(await client.setRescue({ afterSeconds: 0, notice })).toEqual({ enabled: true, afterSeconds: 0, notice });
    expect(await client.getRescue()).toEqual({ enabled: true, afterSeconds: 0, notice });
    const refused = await client.setRescue({ afterSeconds: -5 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BrokerValidationError);

    const session = await client.createSession({ channel: 'sms', participants: participants() });
    expect(session.numberHistory).toEqual([
      { provider: 'primary', proxyNumber: session.proxyNumber, since: session.createdAt, until: null },
    ]);
    try {
      // The primary goes down; creates fail over until its breaker opens; afterSeconds 0: due at once.
      await setFault(broker.sim.url, 'primary', { mode: 'down' });
      for (let i = 0; i < 5; i++) await client.createSession({ channel: 'sms', participants: participants() });
      await broker.app.get(SessionRescue).runOnce();
      const rebound = await waitFor('session.rebound', session.id);
      expect(rebound.data).toMatchObject({
        from: { provider: 'primary', proxyNumber: session.proxyNumber },
        to: { provider: 'failover', proxyNumber: rebound.data.session.proxyNumber },
      });
      expect(rebound.data.session).toEqual(await client.getSession(session.id));
      expect(rebound.data.session.numberHistory.map((n) => n.provider)).toEqual(['primary', 'failover']);
      expect(describeEvent(rebound)).toContain(`moved off primary ${session.proxyNumber} to failover`);
      expect(await client.disableRescue()).toEqual({ enabled: false, afterSeconds: null, notice: null });
    } finally {
      await setFault(broker.sim.url, 'primary', { mode: 'ok' });
      await client.setCallbackUrl(null);
    }
  });

  it('puts the request id on every error, the one the broker logged the call under', async () => {
    const missing = await client.getDelivery('6d7c1a52-5a2e-4f55-9d1c-1b6a4f0e9d11').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(BrokerNotFoundError);
    expect((missing as BrokerNotFoundError).requestId).toMatch(/^[0-9a-f-]{36}$/);

    const nowhere = new BrokerClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, apiKey: API_KEY, retries: 0 });
    const unreachable = await nowhere.getCallbackUrl().catch((error: unknown) => error);
    expect(unreachable).toBeInstanceOf(BrokerNetworkError);
    expect((unreachable as BrokerNetworkError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
