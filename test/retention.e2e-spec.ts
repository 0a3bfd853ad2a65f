/**
 * INTERACTION_TEXT_RETENTION_DAYS: a relayed text is erased once it is that many days old on the app's
 * clock, not a millisecond before; the interaction itself (who, to whom, when, its status) stays readable.
 * A relay still waiting to be sent keeps its text until it has gone. The same for the text a stored webhook
 * event carries (`interaction.out_of_session`): erased by the same rule, kept while a delivery of it is pending.
 * The pass is the retention job's own, run on demand instead of waiting for its interval.
 */
import type { Clock } from '@app/clock';
import { WebhookReceiver } from '@app/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { CLOCK } from '../apps/broker/src/common/clock';
import { DeliveryWorkerService } from '../apps/broker/src/notifications/delivery/delivery-worker.service';
import { RelayWorker } from '../apps/broker/src/relay/relay-worker';
import { MessageTextRetention } from '../apps/broker/src/retention/message-text-retention';
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault, simInbound } from './support/sim-control';

const DAYS = 30;
const DAY_MS = 86_400_000;

interface Created {
  id: string;
  provider: string;
  proxyNumber: string;
  participants: Array<{ number: string }>;
}

describe('retention of message texts', () => {
  let broker: BrokerHarness;
  let clock: Clock;
  let wallNow: Clock['now'];
  let dataSource: DataSource;
  let receiver: WebhookReceiver;

  const auth = { authorization: `Bearer ${API_KEY}` };
  const interactions = async (sessionId: string) =>
    (await request(broker.url).get(`/v1/sessions/${sessionId}/interactions`).set(auth).expect(200)).body.interactions as Array<{
      id: string;
      from: string;
      to: string;
      status: string;
      createdAt: string;
    }>;
  const stored = async (id: string) =>
    (
      (await dataSource.query('SELECT text, created_at FROM interactions WHERE id = $1', [id])) as Array<{
        text: string | null;
        created_at: Date;
      }>
    )[0];
  const pass = () => broker.app.get(MessageTextRetention).runOnce();

  /** A text from the first participant, relayed (or left pending when the provider refuses it). */
  async function textOn(session: Created, text: string): Promise<string> {
    await simInbound(broker.sim.url, session.provider, {
      channel: 'sms',
      from: session.participants[0].number,
      to: session.proxyNumber,
      text,
    });
    let id = '';
    await eventually(async () => {
      const [first] = await interactions(session.id);
      id = first?.id ?? '';
      return id !== '';
    });
    return id;
  }

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    broker = await startBroker({
      ...AUTH_ENV,
      INTERACTION_TEXT_RETENTION_DAYS: String(DAYS),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // Deliveries are attempted when an event is recorded and when the test says (the worker's runOnce), never
      // while it has moved the clock (past the 72 h a delivery is given up after).
      WEBHOOK_POLL_INTERVAL_MS: '3600000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
      // Relays are retried when the test says (RelayWorker.run), never while it has moved the clock.
      RELAY_RETRY_INTERVAL_MS: '3600000',
    });
    clock = broker.app.get<Clock>(CLOCK);
    wallNow = clock.now;
    dataSource = broker.app.get(DataSource);
  });
  afterEach(() => {
    clock.now = wallNow;
  });
  afterAll(async () => {
    await broker?.close();
    await receiver?.close();
  });

  it('keeps a relayed text until it is exactly INTERACTION_TEXT_RETENTION_DAYS old, then erases it and keeps the interaction', async () => {
    const session = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body as Created;
    const id = await textOn(session, 'at the gate');
    await eventually(async () => (await interactions(session.id))[0].status !== 'pending');
    const before = await interactions(session.id);
    const row = await stored(id);
    expect(row.text).toBe('at the gate');
    const arrived = row.created_at.getTime();

    clock.now = () => arrived + DAYS * DAY_MS - 1;
    await pass();
    expect((await stored(id)).text).toBe('at the gate');

    clock.now = () => arrived + DAYS * DAY_MS;
    await pass();
    expect((await stored(id)).text).toBeNull();
    // Who wrote to whom, when, and what became of it: all still there.
    expect(await interactions(session.id)).toEqual(before);

    const metrics = await request(broker.url).get('/metrics').expect(200);
    expect(metrics.text).toMatch(/^broker_interaction_texts_erased_total 1$/m);
  });

  it('keeps the text of a relay still waiting to be sent, however old, and erases it once it has gone', async () => {
    const session = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body as Created;
    await setFault(broker.sim.url, session.provider, { mode: 'error' });
    let id: string;
    try {
      id = await textOn(session, 'still to send');
      expect((await interactions(session.id))[0].status).toBe('pending');
      const arrived = (await stored(id)).created_at.getTime();
      clock.now = () => arrived + 2 * DAYS * DAY_MS;
      await pass();
      expect((await stored(id)).text).toBe('still to send');
    } finally {
      clock.now = wallNow;
      await setFault(broker.sim.url, session.provider, { mode: 'ok' });
    }
    // Due now rather than after its backoff: the provider takes it on the next pass.
    await dataSource.query('UPDATE interactions SET next_attempt_at = now() WHERE id = $1', [id]);
    await broker.app.get(RelayWorker).run();
    expect((await interactions(session.id))[0].status).toBe('relayed');
    const arrived = (await stored(id)).created_at.getTime();
    clock.now = () => arrived + DAYS * DAY_MS;
    await pass();
    expect((await stored(id)).text).toBeNull();
  });

  it('erases the text a stored interaction.out_of_session event carries by the same rule, once no delivery of it is pending', async () => {
    await request(broker.url).put('/v1/account/callback-url').set(auth).send({ callbackUrl: receiver.url }).expect(200);
    receiver.answer = () => ({ status: 503 });
    // A text into a voice-only session reaches no relay: the account hears of it, text and all.
    const session = (await createSession(broker.url, sessionBody(freshPair(), { channel: 'voice' })).expect(201)).body as Created;
    await simInbound(broker.sim.url, session.provider, {
      channel: 'sms',
      from: session.participants[0].number,
      to: session.proxyNumber,
      text: 'I am at gate 4',
    });
    const event = async () =>
      (
        (await dataSource.query(
          `SELECT e.id, e.data, e.created_at, d.status FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id
            WHERE e.session_id = $1 AND e.type = 'interaction.out_of_session'`,
          [session.id],
        )) as Array<{ id: string; data: Record<string, unknown>; created_at: Date; status: string }>
      )[0];
    await eventually(async () => (await event()) !== undefined && receiver.received.length > 0);
    const recorded = await event();
    expect(recorded).toMatchObject({ status: 'pending', data: { reason: 'channel-not-in-session', text: 'I am at gate 4' } });
    const created = recorded.created_at.getTime();

    // Old enough, but its delivery is still pending (the endpoint answered 503): it keeps the text it is to send.
    clock.now = () => created + 2 * DAYS * DAY_MS;
    await pass();
    expect((await event()).data.text).toBe('I am at gate 4');
    clock.now = wallNow;

    // Delivered, with its text; then kept until exactly INTERACTION_TEXT_RETENTION_DAYS old, and erased.
    receiver.answer = () => ({ status: 200 });
    await dataSource.query('UPDATE webhook_deliveries SET next_attempt_at = now() WHERE event_id = $1', [recorded.id]);
    const worker = broker.app.get(DeliveryWorkerService).worker;
    await worker.runOnce();
    await worker.whenIdle();
    expect((await event()).status).toBe('delivered');
    const sent = receiver.received.filter((r) => (JSON.parse(r.body) as { id: string }).id === recorded.id);
    expect((JSON.parse(sent[sent.length - 1].body) as { data: { text: string } }).data.text).toBe('I am at gate 4');

    clock.now = () => created + DAYS * DAY_MS - 1;
    await pass();
    expect((await event()).data.text).toBe('I am at gate 4');
    clock.now = () => created + DAYS * DAY_MS;
    await pass();
    const erased = await event();
    expect(erased.data.text).toBeNull();
    // Who wrote to which number, when, and why it reached no relay: all still there.
    expect(erased.data).toMatchObject({
      reason: 'channel-not-in-session',
      sessionId: session.id,
      channel: 'sms',
      from: session.participants[0].number,
      proxyNumber: session.proxyNumber,
    });
    const listed = await request(broker.url).get(`/v1/events?session=${session.id}`).set(auth).expect(200);
    const shown = (listed.body.events as Array<{ id: string; data: Record<string, unknown> }>).find((e) => e.id === recorded.id);
    expect(shown?.data.text).toBeNull();
    const metrics = await request(broker.url).get('/metrics').expect(200);
    expect(metrics.text).toMatch(/^broker_webhook_event_texts_erased_total 1$/m);
  });
});
