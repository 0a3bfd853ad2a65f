/**
 * The rest of Twilio Proxy's v1 routes on the broker, and their time rules on the app's clock (moved, never
 * waited for): a first participant's number held until the second joins, through the sweeper; a Session's
 * ttl and date_expiry on both sides of the boundary; updates; reserved numbers; removing participants,
 * Sessions, Services and an interaction's text. At the end, every operation twilio_proxy_v1.json describes
 * has answered, each answer valid against its schema.
 */
import request from 'supertest';
import twilio from 'twilio';
import type { Clock } from '@app/clock';
import { CLOCK } from '../apps/broker/src/common/clock';
import { SessionSweeper } from '../apps/broker/src/sessions/session-sweeper';
import { API_KEY, AUTH_ENV } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { simInbound } from './support/sim-control';
import { ValidatingRequestClient, dedicateNumbers, proxyOperations, type PoolNumber } from './support/twilio-proxy-client';

describe('Twilio Proxy v1 on the broker: the lifecycle of its resources', () => {
  let broker: BrokerHarness;
  let clock: Clock;
  let wallNow: Clock['now'];
  let http: ValidatingRequestClient;
  let client: twilio.Twilio;
  let service: { sid: string; uniqueName: string };
  let numbers: PoolNumber[];
  let counter = 0;
  const person = () => `+23480340040${String(++counter).padStart(2, '0')}`;
  const proxy = () => client.proxy.v1.services(service.sid);
  const sweep = () => broker.app.get(SessionSweeper).sweep();
  const at = (ms: number) => {
    clock.now = () => ms;
  };

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV, SESSION_SWEEP_INTERVAL_MS: '3600000' });
    clock = broker.app.get<Clock>(CLOCK);
    wallNow = clock.now;
    const account = (await request(broker.url).get('/v1/account').set('authorization', `Bearer ${API_KEY}`).expect(200)).body;
    http = new ValidatingRequestClient(`${broker.url}/compat/twilio-proxy`);
    client = twilio(account.twilioAccountSid, API_KEY, { httpClient: http });
    service = await client.proxy.v1.services.create({ uniqueName: 'lifecycle', numberSelectionBehavior: 'avoid-sticky' });
    numbers = await dedicateNumbers(broker.url, account.id, 'primary', 3);
    for (const n of numbers) await proxy().phoneNumbers.create({ phoneNumber: n.number });
  }, 120_000);

  afterEach(() => {
    clock.now = wallNow;
    expect(http.failures).toEqual([]);
  });

  afterAll(async () => {
    await broker?.close();
  });

  it('reads and updates a Service by sid and by unique name', async () => {
    const byName = await client.proxy.v1.services('lifecycle').fetch();
    expect(byName.sid).toBe(service.sid);
    const updated = await proxy().update({ defaultTtl: 600, numberSelectionBehavior: 'prefer-sticky' });
    expect(updated).toMatchObject({ defaultTtl: 600, numberSelectionBehavior: 'prefer-sticky', uniqueName: 'lifecycle' });
    expect((await client.proxy.v1.services.list()).map((s) => s.sid)).toContain(service.sid);
    await expect(proxy().update({ geoMatchLevel: 'area-code' })).rejects.toMatchObject({ status: 400, code: 80701 });
  });

  it('holds the first participant’s number through the sweeper’s drop of stale reservations, until the second joins', async () => {
    const session = await proxy().sessions.create({ ttl: 0 });
    const first = await proxy().sessions(session.sid).participants.create({ identifier: person() });
    // Ten minutes on, far past any create's reservation (PROVIDER_CALL_TIMEOUT_MS × 3 + 60 s): a hold is not one.
    at(Date.now() + 10 * 60_000);
    await sweep();
    expect((await proxy().sessions(session.sid).participants(first.sid).fetch()).proxyIdentifier).toBe(first.proxyIdentifier);
    const second = await proxy().sessions(session.sid).participants.create({ identifier: person() });
    expect(second.proxyIdentifier).toBe(first.proxyIdentifier);
    expect((await proxy().sessions(session.sid).fetch()).status).toBe('open');
  });

  it('closes a Session its ttl after its creation without an interaction: open 1 ms before, closed (ttl) from then, its number free again', async () => {
    const rider = person();
    const created = await proxy().sessions.create({ ttl: 300 });
    const first = await proxy().sessions(created.sid).participants.create({ identifier: rider });
    const deadline = created.dateCreated.getTime() + 300_000;
    expect((await proxy().sessions(created.sid).fetch()).dateExpiry?.getTime()).toBe(Math.floor(deadline / 1000) * 1000);
    at(deadline - 1);
    expect((await proxy().sessions(created.sid).fetch()).status).toBe('open');
    await expect(
      (async () => {
        const other = await proxy().sessions.create({ ttl: 0 });
        const again = await proxy().sessions(other.sid).participants.create({ identifier: rider, proxyIdentifier: first.proxyIdentifier });
        return again.proxyIdentifier;
      })(),
    ).rejects.toMatchObject({ status: 400, code: 80604 });
    at(deadline);
    expect(await proxy().sessions(created.sid).fetch()).toMatchObject({ status: 'closed', closedReason: 'ttl' });
    // The pool rule lets the rider have that number again in another Session.
    const other = await proxy().sessions.create({ ttl: 0 });
    const again = await proxy().sessions(other.sid).participants.create({ identifier: rider, proxyIdentifier: first.proxyIdentifier });
    expect(again.proxyIdentifier).toBe(first.proxyIdentifier);
    await expect(proxy().sessions(created.sid).participants.create({ identifier: person() })).rejects.toMatchObject({
      status: 400,
      code: 80608,
    });
  });

  it('moves an active Session’s ttl by each interaction, and a DateExpiry given later is its hard end', async () => {
    const [a, b] = [person(), person()];
    const session = await proxy().sessions.create({ ttl: 120, mode: 'message-only' });
    await proxy().sessions(session.sid).participants.create({ identifier: a });
    const second = await proxy().sessions(session.sid).participants.create({ identifier: b });
    await simInbound(broker.sim.url, 'primary', { channel: 'sms', from: a, to: second.proxyIdentifier, text: 'hello' });
    const talked = await proxy().sessions(session.sid).fetch();
    expect(talked.status).toBe('in-progress');
    expect(talked.dateExpiry!.getTime()).toBeGreaterThan(session.dateCreated.getTime() + 120_000 - 1000);

    const end = new Date(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000);
    const rescheduled = await proxy().sessions(session.sid).update({ dateExpiry: end, ttl: 0 });
    expect(rescheduled).toMatchObject({ ttl: 0, status: 'in-progress' });
    expect(rescheduled.dateExpiry!.getTime()).toBe(end.getTime());
    at(end.getTime() - 1);
    expect((await proxy().sessions(session.sid).fetch()).status).toBe('in-progress');
    at(end.getTime());
    expect(await proxy().sessions(session.sid).fetch()).toMatchObject({ status: 'closed', closedReason: 'date_expiry' });
  });

  it('gives a reserved number only to a participant who asks for it; a number outside the Service is refused', async () => {
    const [reserved] = numbers;
    const updated = await proxy().phoneNumbers(reserved.number).update({ isReserved: true });
    expect(updated).toMatchObject({ isReserved: true, phoneNumber: reserved.number });
    expect((await proxy().phoneNumbers(updated.sid).fetch()).isReserved).toBe(true);
    for (let i = 0; i < 3; i++) {
      const session = await proxy().sessions.create({});
      const p = await proxy().sessions(session.sid).participants.create({ identifier: person() });
      expect(p.proxyIdentifier).not.toBe(reserved.number);
    }
    const session = await proxy().sessions.create({});
    const asked = await proxy().sessions(session.sid).participants.create({ identifier: person(), proxyIdentifierSid: updated.sid });
    expect(asked).toMatchObject({ proxyIdentifier: reserved.number, proxyIdentifierSid: updated.sid });
    await expect(
      proxy().sessions(session.sid).participants.create({ identifier: person(), proxyIdentifier: numbers[1].number }),
    ).rejects.toMatchObject({ status: 400, code: 80604 });
    await expect(
      proxy().sessions(session.sid).participants.create({ identifier: person(), proxyIdentifier: '+2349019999999' }),
    ).rejects.toMatchObject({
      status: 400,
      code: 80606,
    });
    const listed = await proxy().phoneNumbers.list();
    expect(listed.find((n) => n.phoneNumber === reserved.number)?.inUse).toBeGreaterThanOrEqual(1);
  });

  it('removes participants: the only one frees its number; one of two ends the Session', async () => {
    const lone = await proxy().sessions.create({});
    const only = await proxy().sessions(lone.sid).participants.create({ identifier: person() });
    await proxy().sessions(lone.sid).participants(only.sid).remove();
    expect(await proxy().sessions(lone.sid).participants.list()).toEqual([]);
    expect((await proxy().sessions(lone.sid).fetch()).status).toBe('open');

    const full = await proxy().sessions.create({ mode: 'message-only' });
    const first = await proxy().sessions(full.sid).participants.create({ identifier: person() });
    const second = await proxy().sessions(full.sid).participants.create({ identifier: person() });
    expect((await proxy().sessions(full.sid).participants.list()).map((p) => p.sid)).toEqual([first.sid, second.sid]);
    await proxy().sessions(full.sid).participants(second.sid).remove();
    expect(await proxy().sessions(full.sid).fetch()).toMatchObject({ status: 'closed', closedReason: 'participant-removed' });
  });

  it('lists and erases interactions and MessageInteractions, deletes a Session and the Service', async () => {
    const [a, b] = [person(), person()];
    const session = await proxy().sessions.create({ mode: 'message-only' });
    const first = await proxy().sessions(session.sid).participants.create({ identifier: a });
    await proxy().sessions(session.sid).participants.create({ identifier: b });
    const sent = await proxy().sessions(session.sid).participants(first.sid).messageInteractions.create({ body: 'your ride is here' });
    expect((await proxy().sessions(session.sid).participants(first.sid).messageInteractions.list()).map((m) => m.sid)).toEqual([sent.sid]);
    expect((await proxy().sessions(session.sid).participants(first.sid).messageInteractions(sent.sid).fetch()).data).toBe(
      JSON.stringify({ body: 'your ride is here' }),
    );
    expect((await proxy().sessions(session.sid).interactions.list()).map((i) => i.sid)).toEqual([sent.sid]);
    expect((await proxy().sessions(session.sid).interactions(sent.sid).fetch()).outboundParticipantSid).toBe(first.sid);
    await proxy().sessions(session.sid).interactions(sent.sid).remove();
    expect((await proxy().sessions(session.sid).interactions(sent.sid).fetch()).data).toBeNull();

    await proxy().sessions(session.sid).remove();
    await expect(proxy().sessions(session.sid).fetch()).rejects.toMatchObject({ status: 404, code: 20404 });
    expect((await proxy().sessions.list()).map((s) => s.sid)).not.toContain(session.sid);

    const live = await proxy().sessions.create({ mode: 'message-only' });
    await proxy().sessions(live.sid).participants.create({ identifier: person() });
    await proxy().sessions(live.sid).participants.create({ identifier: person() });
    await proxy().phoneNumbers(numbers[2].number).remove();
    expect((await proxy().phoneNumbers.list()).map((n) => n.phoneNumber)).not.toContain(numbers[2].number);
    await proxy().remove();
    await expect(proxy().fetch()).rejects.toMatchObject({ status: 404, code: 20404 });
  });

  it('has answered every operation twilio_proxy_v1.json describes', () => {
    const answered = new Set(http.seen.map((s) => s.split(' ').slice(0, 2).join(' ')));
    const described = proxyOperations().map((o) => `${o.method} ${o.template}`);
    expect(described.filter((o) => !answered.has(o))).toEqual([]);
  });
});
