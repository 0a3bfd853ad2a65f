/**
 * What Twilio Proxy never had, through its own API (issue #35): failover, and participant races settled by the
 * database instead of Twilio's 409. The primary goes down; Proxy-style Sessions are made (and stay open) on the
 * failover within the same requests, relaying there; concurrent adds never put one person on one number twice.
 */
import request from 'supertest';
import twilio from 'twilio';
import { API_KEY, AUTH_ENV } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { setFault, simCalls, simInbound } from './support/sim-control';
import { ValidatingRequestClient, dedicateNumbers, type PoolNumber } from './support/twilio-proxy-client';

describe('Twilio Proxy sessions on the broker: failover and races', () => {
  let broker: BrokerHarness;
  let http: ValidatingRequestClient;
  let client: twilio.Twilio;
  let service: { sid: string };
  let primary: PoolNumber[];
  let failover: PoolNumber[];
  let counter = 0;
  const person = () => `+23480340030${String(++counter).padStart(2, '0')}`;

  const proxy = () => client.proxy.v1.services(service.sid);
  const pair = async (a: string, b: string) => {
    const session = await proxy().sessions.create({ mode: 'message-only' });
    const first = await proxy().sessions(session.sid).participants.create({ identifier: a });
    const second = await proxy().sessions(session.sid).participants.create({ identifier: b });
    return { session, first, second };
  };
  const health = async (name: string) =>
    ((await request(broker.url).get('/v1/health/cpaas').expect(200)).body.providers as Array<{ name: string; state: string }>).find(
      (p) => p.name === name,
    )!.state;

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      // Health checks are driven by nothing here: the breaker opens on traffic alone.
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      PROVIDER_CALL_TIMEOUT_MS: '1000',
    });
    const account = (await request(broker.url).get('/v1/account').set('authorization', `Bearer ${API_KEY}`).expect(200)).body;
    http = new ValidatingRequestClient(`${broker.url}/compat/twilio-proxy`);
    client = twilio(account.twilioAccountSid, API_KEY, { httpClient: http });
    service = await client.proxy.v1.services.create({ uniqueName: 'failover' });
    primary = await dedicateNumbers(broker.url, account.id, 'primary', 2);
    failover = await dedicateNumbers(broker.url, account.id, 'failover', 2);
    for (const n of [...primary, ...failover]) await proxy().phoneNumbers.create({ phoneNumber: n.number });
  }, 120_000);

  afterAll(async () => {
    await broker?.close();
  });

  afterEach(() => expect(http.failures).toEqual([]));

  it('with the primary up, a Session is made on a primary number of the Service', async () => {
    const { second } = await pair(person(), person());
    expect(primary.map((n) => n.number)).toContain(second.proxyIdentifier);
  });

  it('with the primary down, the second participant’s bind fails over within the request: both are on a failover number', async () => {
    await setFault(broker.sim.url, 'primary', { mode: 'down' });
    const a = person();
    const b = person();
    const session = await proxy().sessions.create({ mode: 'message-only' });
    // The first participant's hold needs no provider call: it is on the primary, where the breaker still admits.
    const first = await proxy().sessions(session.sid).participants.create({ identifier: a });
    expect(primary.map((n) => n.number)).toContain(first.proxyIdentifier);
    const second = await proxy().sessions(session.sid).participants.create({ identifier: b });
    expect(failover.map((n) => n.number)).toContain(second.proxyIdentifier);
    const both = await proxy().sessions(session.sid).participants.list();
    expect(both.map((p) => p.proxyIdentifier)).toEqual([second.proxyIdentifier, second.proxyIdentifier]);

    const relayed = await simInbound(broker.sim.url, 'failover', {
      channel: 'sms',
      from: a,
      to: second.proxyIdentifier,
      text: 'on the failover',
    });
    expect(relayed.body).toMatchObject({ result: 'relayed' });
    expect((await simCalls(broker.sim.url, 'failover', 'sms')).filter((c) => c.to === b).map((c) => [c.from, c.text])).toEqual([
      [second.proxyIdentifier, 'on the failover'],
    ]);
    expect((await proxy().sessions(session.sid).fetch()).status).toBe('in-progress');
  });

  it('once the primary’s breaker is OPEN, new Sessions go to the failover from their first participant on, and stay open there', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5 && (await health('primary')) !== 'OPEN'; i++) made.push((await pair(person(), person())).session.sid);
    expect(await health('primary')).toBe('OPEN');
    const session = await proxy().sessions.create({ mode: 'message-only' });
    const first = await proxy().sessions(session.sid).participants.create({ identifier: person() });
    expect(failover.map((n) => n.number)).toContain(first.proxyIdentifier);
    await proxy().sessions(session.sid).participants.create({ identifier: person() });
    for (const sid of [...made, session.sid]) {
      const fetched = await proxy().sessions(sid).fetch();
      expect(fetched.status).toBe('open');
      const participants = await proxy().sessions(sid).participants.list();
      expect(failover.map((n) => n.number)).toContain(participants[0].proxyIdentifier);
    }
    await setFault(broker.sim.url, 'primary', { mode: 'ok' });
  });

  it('settles concurrent adds of one person to two Sessions in the database: two numbers, no 409', async () => {
    const shared = person();
    const sessions = [await proxy().sessions.create({ mode: 'message-only' }), await proxy().sessions.create({ mode: 'message-only' })];
    const added = await Promise.all(sessions.map((s) => proxy().sessions(s.sid).participants.create({ identifier: shared })));
    expect(new Set(added.map((p) => p.proxyIdentifier)).size).toBe(2);
  });

  it('settles two concurrent second participants of one Session: one joins, the other gets 80609', async () => {
    const session = await proxy().sessions.create({ mode: 'message-only' });
    await proxy().sessions(session.sid).participants.create({ identifier: person() });
    const results = await Promise.allSettled(
      [person(), person()].map((identifier) => proxy().sessions(session.sid).participants.create({ identifier })),
    );
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ status: 400, code: 80609 });
    expect(await proxy().sessions(session.sid).participants.list()).toHaveLength(2);
  });
});
