/**
 * INTERACTION_TEXT_RETENTION_DAYS: a relayed text is erased once it is that many days old on the app's
 * clock, not a millisecond before; the interaction itself (who, to whom, when, its status) stays readable.
 * A relay still waiting to be sent keeps its text until it has gone. The pass is the retention job's own,
 * run on demand instead of waiting for its interval.
 */
import type { Clock } from '@app/clock';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { CLOCK } from '../apps/broker/src/common/clock';
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
    broker = await startBroker({
      ...AUTH_ENV,
      INTERACTION_TEXT_RETENTION_DAYS: String(DAYS),
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
});
