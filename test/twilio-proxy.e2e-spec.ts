/**
 * The Twilio-Proxy-compatible API (issue #35) driven by the `twilio` package's own Proxy client, unchanged but
 * for the RequestClient of docs/twilio-proxy-migration.md, against the broker and the simulator: a Service,
 * its PhoneNumbers, a Session, two Participants, an inbound text relayed, a MessageInteraction, the
 * Interactions, the close, paging through Sessions, and Twilio's errors. Every answer is checked against the
 * response schema twilio_proxy_v1.json gives its operation (ajv), and the whole conversation runs through
 * Prism in validation-proxy mode, which must report no violation.
 */
import request from 'supertest';
import twilio from 'twilio';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, OTHER_API_KEY } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { TWILIO_API_SPEC, freePortBelow32768, prismRefusal, startPrism, startPrismProxy, type PrismServer } from './support/prism';
import { simCalls, simInbound } from './support/sim-control';
import { TWILIO_PROXY_SPEC, ValidatingRequestClient } from './support/twilio-proxy-client';

const A = '+2348034001001';
const B = '+2348034001002';

interface PoolNumber {
  id: string;
  provider: string;
  number: string;
  accountId: string | null;
}

describe('Twilio Proxy v1 through the twilio package, on the broker', () => {
  let broker: BrokerHarness;
  let prism: PrismServer;
  /** Through Prism, which reports any answer its description does not document: the successes. */
  let http: ValidatingRequestClient;
  let client: twilio.Twilio;
  /** Straight to the broker: the errors (Twilio's description documents none), still checked for Twilio's error body. */
  let directHttp: ValidatingRequestClient;
  let direct: twilio.Twilio;
  let accountSid: string;
  let numbers: PoolNumber[];

  const admin = () => ({
    get: (path: string) => request(broker.url).get(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
    put: (path: string) => request(broker.url).put(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
  });
  const sid = (prefix: string, id: string) => prefix + id.replace(/-/g, '');

  beforeAll(async () => {
    const prismPort = await freePortBelow32768();
    // Prism stands where the compat API is: the answers' URLs (next_page_url among them) lead back through it.
    broker = await startBroker({
      ...AUTH_ENV,
      TWILIO_PROXY_PUBLIC_URL: `http://127.0.0.1:${prismPort}`,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    prism = await startPrismProxy(TWILIO_PROXY_SPEC, `${broker.url}/compat/twilio-proxy`, prismPort);
    const account = (await request(broker.url).get('/v1/account').set('authorization', `Bearer ${API_KEY}`).expect(200)).body;
    accountSid = account.twilioAccountSid;
    http = new ValidatingRequestClient(`http://127.0.0.1:${prismPort}`);
    client = twilio(accountSid, API_KEY, { httpClient: http });
    directHttp = new ValidatingRequestClient(`${broker.url}/compat/twilio-proxy`);
    direct = twilio(accountSid, API_KEY, { httpClient: directHttp });
    numbers = (await admin().get('/v1/admin/numbers').expect(200)).body.numbers;
    // An operator dedicates pool numbers to the account: two on each provider become the Service's.
    for (const n of [
      ...numbers.filter((n) => n.provider === 'primary').slice(0, 3),
      ...numbers.filter((n) => n.provider === 'failover').slice(0, 2),
    ])
      await admin().put(`/v1/admin/numbers/${n.id}/account`).send({ accountId: account.id }).expect(200);
    numbers = (await admin().get('/v1/admin/numbers').expect(200)).body.numbers;
  }, 120_000);

  afterAll(async () => {
    await prism?.close();
    await broker?.close();
  });

  afterEach(() => {
    expect(http.failures).toEqual([]);
    expect(directHttp.failures).toEqual([]);
    expect(prism.violations()).toEqual([]);
  });

  it('GET /v1/account shows the account’s Twilio-style sid, the compat API’s user name', () => {
    expect(accountSid).toMatch(/^AC[0-9a-f]{32}$/);
  });

  let service: { sid: string };

  it('creates a Service and adds the account’s dedicated numbers to it, one reserved', async () => {
    service = await client.proxy.v1.services.create({ uniqueName: 'rides', defaultTtl: 3600, numberSelectionBehavior: 'prefer-sticky' });
    expect(service).toMatchObject({ uniqueName: 'rides', defaultTtl: 3600, accountSid, geoMatchLevel: 'country' });
    expect(service.sid).toMatch(/^KS[0-9a-f]{32}$/);
    const mine = numbers.filter((n) => n.accountId !== null);
    for (const [i, n] of mine.entries()) {
      const added = await client.proxy.v1
        .services(service.sid)
        .phoneNumbers.create(i === 0 ? { phoneNumber: n.number, isReserved: true } : { sid: sid('PN', n.id) });
      expect(added).toMatchObject({ sid: sid('PN', n.id), phoneNumber: n.number, isReserved: i === 0, inUse: 0, serviceSid: service.sid });
    }
    const listed = await client.proxy.v1.services(service.sid).phoneNumbers.list();
    expect(listed.map((n) => n.phoneNumber).sort()).toEqual(mine.map((n) => n.number).sort());
  });

  it('refuses a number of the shared pool with Twilio’s 80606', async () => {
    const shared = numbers.find((n) => n.accountId === null)!;
    await expect(direct.proxy.v1.services(service.sid).phoneNumbers.create({ phoneNumber: shared.number })).rejects.toMatchObject({
      status: 400,
      code: 80606,
    });
  });

  let session: { sid: string };
  let participants: Array<{ sid: string; identifier: string; proxyIdentifier: string }>;

  it('creates a Session and adds two Participants, who share one unreserved proxy number of the Service', async () => {
    session = await client.proxy.v1.services(service.sid).sessions.create({ uniqueName: 'ride-1', mode: 'voice-and-message', ttl: 1800 });
    expect(session).toMatchObject({ status: 'open', uniqueName: 'ride-1', ttl: 1800, mode: 'voice-and-message' });
    const first = await client.proxy.v1
      .services(service.sid)
      .sessions(session.sid)
      .participants.create({ identifier: A, friendlyName: 'rider' });
    // The first participant has its number at once, held for it until the second one joins.
    const reserved = numbers.find((n) => n.accountId !== null)!;
    expect(first.proxyIdentifier).toMatch(/^\+/);
    expect(first.proxyIdentifier).not.toBe(reserved.number);
    const second = await client.proxy.v1
      .services(service.sid)
      .sessions(session.sid)
      .participants.create({ identifier: B, friendlyName: 'driver' });
    expect(second.proxyIdentifier).toBe(first.proxyIdentifier);
    participants = await client.proxy.v1.services(service.sid).sessions(session.sid).participants.list();
    expect(participants.map((p) => [p.identifier, p.proxyIdentifier])).toEqual([
      [A, first.proxyIdentifier],
      [B, first.proxyIdentifier],
    ]);
  });

  it('relays an inbound text through the simulator, and sends a MessageInteraction from the proxy number', async () => {
    const proxyNumber = participants[0].proxyIdentifier;
    const provider = numbers.find((n) => n.number === proxyNumber)!.provider;
    const inbound = await simInbound(broker.sim.url, provider, { channel: 'sms', from: A, to: proxyNumber, text: 'at the gate' });
    expect(inbound.body).toMatchObject({ result: 'relayed' });
    const sent = await client.proxy.v1
      .services(service.sid)
      .sessions(session.sid)
      .participants(participants[1].sid)
      .messageInteractions.create({ body: 'Your rider is at the gate' });
    expect(sent).toMatchObject({ type: 'message', participantSid: participants[1].sid, outboundResourceStatus: 'sent' });
    expect(JSON.parse(sent.data)).toEqual({ body: 'Your rider is at the gate' });
    // Each at least once (a relay slowed past PROVIDER_CALL_TIMEOUT_MS on a loaded machine is sent again), in order.
    const texts = (await simCalls(broker.sim.url, provider, 'sms')).filter((c) => c.to === B);
    expect([...new Set(texts.map((c) => JSON.stringify([c.from, c.text])))].map((t) => JSON.parse(t) as unknown)).toEqual([
      [proxyNumber, 'at the gate'],
      [proxyNumber, 'Your rider is at the gate'],
    ]);
  });

  it('lists the Interactions with Twilio’s fields, newest first, and the session is in-progress', async () => {
    const interactions = await client.proxy.v1.services(service.sid).sessions(session.sid).interactions.list();
    expect(interactions.map((i) => [i.type, i.inboundParticipantSid, i.outboundParticipantSid, JSON.parse(i.data).body])).toEqual([
      ['message', null, participants[1].sid, 'Your rider is at the gate'],
      ['message', participants[0].sid, participants[1].sid, 'at the gate'],
    ]);
    expect(interactions[1]).toMatchObject({
      inboundResourceType: 'Message',
      inboundResourceStatus: 'delivered',
      outboundResourceStatus: 'sent',
    });
    const fetched = await client.proxy.v1.services(service.sid).sessions(session.sid).fetch();
    expect(fetched.status).toBe('in-progress');
    expect(fetched.dateLastInteraction).toBeInstanceOf(Date);
  });

  it('closes the Session with Status=closed; its participants’ number is free for them again', async () => {
    const closed = await client.proxy.v1.services(service.sid).sessions(session.sid).update({ status: 'closed' });
    expect(closed).toMatchObject({ status: 'closed', closedReason: null });
    expect(closed.dateEnded).toBeInstanceOf(Date);
    await expect(
      direct.proxy.v1
        .services(service.sid)
        .sessions(session.sid)
        .participants(participants[1].sid)
        .messageInteractions.create({ body: 'late' }),
    ).rejects.toMatchObject({ status: 409, code: 80608 });
  });

  it('pages through the Service’s Sessions, newest first, following next_page_url', async () => {
    const made: string[] = [session.sid];
    for (let i = 0; i < 4; i++) made.push((await client.proxy.v1.services(service.sid).sessions.create({ uniqueName: `page-${i}` })).sid);
    const page = await client.proxy.v1.services(service.sid).sessions.page({ pageSize: 2 });
    expect(page.instances.map((s) => s.sid)).toEqual(made.slice(-2).reverse());
    const seen = [...page.instances.map((s) => s.sid)];
    for (let next = await page.nextPage(); next; next = await next.nextPage()) seen.push(...next.instances.map((s) => s.sid));
    expect(seen).toEqual([...made].reverse());
    const all = await client.proxy.v1.services(service.sid).sessions.list({ pageSize: 3 });
    expect(all.map((s) => s.sid)).toEqual([...made].reverse());
  });

  it('answers in Twilio’s error bodies: a wrong key, another account’s Service, a third participant, a taken unique name', async () => {
    const wrong = twilio(accountSid, 'not-the-key', { httpClient: directHttp });
    await expect(wrong.proxy.v1.services.list()).rejects.toMatchObject({ status: 401, code: 20003 });
    const other = (await request(broker.url).get('/v1/account').set('authorization', `Bearer ${OTHER_API_KEY}`).expect(200)).body;
    const stranger = twilio(other.twilioAccountSid, OTHER_API_KEY, { httpClient: directHttp });
    await expect(stranger.proxy.v1.services(service.sid).fetch()).rejects.toMatchObject({ status: 404, code: 20404 });
    // The key of one account with the sid of another.
    const mixed = twilio(other.twilioAccountSid, API_KEY, { httpClient: directHttp });
    await expect(mixed.proxy.v1.services.list()).rejects.toMatchObject({ status: 401, code: 20003 });

    const full = await client.proxy.v1.services(service.sid).sessions.create({ mode: 'message-only' });
    await client.proxy.v1.services(service.sid).sessions(full.sid).participants.create({ identifier: '+2348034001011' });
    await expect(
      direct.proxy.v1.services(service.sid).sessions(full.sid).participants.create({ identifier: '+2348034001011' }),
    ).rejects.toMatchObject({ status: 400, code: 80103 });
    await client.proxy.v1.services(service.sid).sessions(full.sid).participants.create({ identifier: '+2348034001012' });
    await expect(
      direct.proxy.v1.services(service.sid).sessions(full.sid).participants.create({ identifier: '+2348034001013' }),
    ).rejects.toMatchObject({ status: 400, code: 80609 });
    await expect(direct.proxy.v1.services(service.sid).sessions.create({ uniqueName: 'page-0' })).rejects.toMatchObject({
      status: 409,
      code: 80603,
    });
    await expect(direct.proxy.v1.services.create({ uniqueName: 'rides' })).rejects.toMatchObject({ status: 409, code: 80602 });
    await expect(direct.proxy.v1.services(service.sid).sessions.create({ ttl: -1 })).rejects.toMatchObject({ status: 400, code: 80701 });
  });
});

describe('Twilio Proxy v1 on the broker, carried by Twilio itself (Prism serving Twilio’s API description)', () => {
  const SID = 'AC' + 'ab12cd34'.repeat(4);
  const TOKEN = '5e6f7a8b'.repeat(4);
  const PUBLIC_URL = 'https://broker.example.com';
  const PROXY = '+2349030000005';
  let prism: PrismServer;
  let vendor: FaultProxy;
  let broker: BrokerHarness;
  let http: ValidatingRequestClient;
  let client: twilio.Twilio;

  beforeAll(async () => {
    prism = await startPrism(TWILIO_API_SPEC);
    vendor = await startFaultProxy(prism.url);
    broker = await startBroker({
      ...AUTH_ENV,
      PROVIDERS: `primary=twilio:${vendor.url}`,
      PUBLIC_URL,
      PROVIDER_PRIMARY_ACCOUNT_SID: SID,
      PROVIDER_PRIMARY_AUTH_TOKEN: TOKEN,
      RELAY_RETRY_INTERVAL_MS: '3600000',
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      BREAKER_CLOSED_CHECK_INTERVAL_MS: '3600000',
    });
    const added = (
      await request(broker.url)
        .post('/v1/admin/numbers')
        .set('authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ provider: 'primary', number: PROXY })
        .expect(201)
    ).body;
    const account = (await request(broker.url).get('/v1/account').set('authorization', `Bearer ${API_KEY}`).expect(200)).body;
    await request(broker.url)
      .put(`/v1/admin/numbers/${added.id}/account`)
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ accountId: account.id })
      .expect(200);
    http = new ValidatingRequestClient(`${broker.url}/compat/twilio-proxy`);
    client = twilio(account.twilioAccountSid, API_KEY, { httpClient: http });
  }, 120_000);

  afterAll(async () => {
    await broker?.close();
    await vendor?.close();
    await prism?.close();
  });

  afterEach(() => {
    expect(http.failures).toEqual([]);
    expect(vendor.refusals(prismRefusal)).toEqual([]);
  });

  it('relays a Twilio-signed inbound text with one spec-valid Messages.json from the proxy number, and lists it with Twilio’s sids', async () => {
    const service = await client.proxy.v1.services.create({ uniqueName: 'on-twilio' });
    await client.proxy.v1.services(service.sid).phoneNumbers.create({ phoneNumber: PROXY });
    const session = await client.proxy.v1.services(service.sid).sessions.create({ mode: 'message-only' });
    await client.proxy.v1.services(service.sid).sessions(session.sid).participants.create({ identifier: A });
    const second = await client.proxy.v1.services(service.sid).sessions(session.sid).participants.create({ identifier: B });
    expect(second.proxyIdentifier).toBe(PROXY);
    // Twilio keeps no sessions: the participants cost no call to it.
    expect(vendor.exchanges).toEqual([]);

    const messageSid = 'SM' + '0123456789abcdef'.repeat(2);
    const params = { AccountSid: SID, MessageSid: messageSid, SmsSid: messageSid, From: A, To: PROXY, Body: 'on my way', NumMedia: '0' };
    const path = '/v1/providers/primary/inbound/sms';
    await request(broker.url)
      .post(path)
      .set('content-type', 'application/x-www-form-urlencoded')
      .set('x-twilio-signature', twilio.getExpectedTwilioSignature(TOKEN, `${PUBLIC_URL}${path}`, params))
      .send(new URLSearchParams(params).toString())
      .expect(200);
    const sent = vendor.exchanges.filter((e) => e.method === 'POST' && e.path === `/2010-04-01/Accounts/${SID}/Messages.json`);
    expect(sent.map((e) => Object.fromEntries(new URLSearchParams(e.body)))).toEqual([
      { From: PROXY, To: B, Body: 'on my way', StatusCallback: `${PUBLIC_URL}/v1/providers/primary/status` },
    ]);
    const [relayed] = await client.proxy.v1.services(service.sid).sessions(session.sid).interactions.list();
    expect(relayed).toMatchObject({
      inboundResourceSid: messageSid,
      outboundResourceStatus: 'sent',
      outboundResourceSid: expect.stringMatching(/^SM[0-9a-f]{32}$/i),
    });
  });
});
