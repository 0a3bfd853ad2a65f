/**
 * Nigerian numbers end to end (issue #30): PROVIDERS=primary=africastalking,failover=infobip,
 * each adapter talking, through the suite's fault proxy, to a loopback stand-in of its vendor
 * (Africa's Talking: checked against the `africastalking` package in the adapter's spec; Infobip: held to
 * the contract fixtures written from its SDK models, any refusal fails the test). The Africa's Talking
 * pool is voice-only, as Nigerian long numbers are; Infobip's carries SMS and voice.
 *
 * Africa's Talking fails: bridged calls it cannot set up open its breaker, new sessions land on Infobip
 * numbers and their calls are bridged there (a dialog, from the proxy number), the old sessions stay and
 * keep being bridged on Africa's Talking; Africa's Talking recovers through passing health checks
 * (HALF_OPEN) and real traffic (bridged calls) to CLOSED. Forged, replayed, token-less and wrong-token
 * webhooks are refused, nothing relayed.
 */
import { XMLParser } from 'fast-xml-parser';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, createSession } from './support/api-client';
import { startAfricasTalkingMock, type AfricasTalkingMock } from './support/africastalking-mock';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { infobipFixture, startInfobipMock, type InfobipMock } from './support/infobip-mock';

const PUBLIC_URL = 'https://broker.example.com';
const AT = { username: 'lagos-rides', apiKey: 'atsk_' + '5ca1ab1e'.repeat(8), token: 'at-token-' + '0a1b2c3d'.repeat(5) };
const IB = { apiKey: '0123456789abcdef0123456789abcdef-aa11bb22', token: 'ib-token-' + 'f00dfeed'.repeat(5) };
const AT_NUMBERS = ['+2349010000001', '+2349010000002'];
const IB_NUMBERS = ['+2349020000001', '+2349020000002'];
const digits = (e164: string) => e164.slice(1);

let pairs = 0;
const pair = (): [string, string] => {
  pairs += 1;
  const base = 2348060000000 + pairs * 2;
  return [`+${base}`, `+${base + 1}`];
};
let calls = 0;
const callId = (prefix: string) => `${prefix}_${++calls}`;

describe('Nigeria: primary Africa’s Talking, failover Infobip', () => {
  let atMock: AfricasTalkingMock;
  let ibMock: InfobipMock;
  let atApi: FaultProxy;
  let ibApi: FaultProxy;
  let broker: BrokerHarness;
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' });
  const createStatuses: number[] = [];

  beforeAll(async () => {
    [atMock, ibMock] = await Promise.all([startAfricasTalkingMock(AT.apiKey, AT.username), startInfobipMock(IB.apiKey)]);
    [atApi, ibApi] = await Promise.all([startFaultProxy(atMock.url), startFaultProxy(ibMock.url)]);
    broker = await startBroker({
      ...AUTH_ENV,
      PROVIDERS: `primary=africastalking:${atApi.url},failover=infobip:${ibApi.url}`,
      PUBLIC_URL,
      PROVIDER_PRIMARY_USERNAME: AT.username,
      PROVIDER_PRIMARY_API_KEY: AT.apiKey,
      PROVIDER_PRIMARY_WEBHOOK_TOKEN: AT.token,
      PROVIDER_FAILOVER_API_KEY: IB.apiKey,
      PROVIDER_FAILOVER_WEBHOOK_TOKEN: IB.token,
      BREAKER_HEALTH_INTERVAL_MS: '3600000', // health rounds are driven by the test
      BREAKER_CLOSE_AFTER_MS: '300', // the shortened close window
      PROVIDER_CALL_TIMEOUT_MS: '2000',
      RELAY_RETRY_INTERVAL_MS: '3600000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
    // Nigerian long numbers on Africa's Talking carry voice only; Infobip's carry both.
    for (const number of AT_NUMBERS) await addNumber('primary', number, ['voice']);
    for (const number of IB_NUMBERS) await addNumber('failover', number, ['sms', 'voice']);
  }, 120_000);

  afterAll(async () => {
    await broker?.close();
    await Promise.all([atApi?.close(), ibApi?.close(), atMock?.close(), ibMock?.close()]);
  });

  afterEach(() => {
    // Every request that reached a vendor stand-in was one it accepts.
    expect(atMock.refusals).toEqual([]);
    expect(ibMock.refusals).toEqual([]);
  });

  async function addNumber(provider: string, number: string, capabilities: string[]): Promise<void> {
    await request(broker.url)
      .post('/v1/admin/numbers')
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ provider, number, capabilities })
      .expect(201);
  }

  async function create(channel: 'voice' | 'sms') {
    const participants = pair();
    const res = await createSession(broker.url, { channel, participants: participants.map((number) => ({ number })) });
    createStatuses.push(res.status);
    return { ...(res.body as { id: string; provider: string; proxyNumber: string }), participants };
  }

  async function state(name: string): Promise<string> {
    const health = await request(broker.url).get('/v1/health/cpaas').expect(200);
    return health.body.providers.find((p: { name: string }) => p.name === name).state;
  }

  async function interactions(sessionId: string): Promise<Array<{ channel: string; status: string; from: string; to: string }>> {
    return (await request(broker.url).get(`/v1/sessions/${sessionId}/interactions`).set('authorization', `Bearer ${API_KEY}`).expect(200))
      .body.interactions;
  }

  /** Africa's Talking's voice callback, form-encoded, to the URL registered with its token. */
  const atVoice = (params: Record<string, string>, token: string | null = AT.token) =>
    request(broker.url)
      .post(`/v1/providers/primary/inbound/voice${token === null ? '' : `?token=${encodeURIComponent(token)}`}`)
      .type('form')
      .send(new URLSearchParams(params).toString());

  /** A call to an Africa's Talking session, answered, then ended with `cause`. */
  async function atCall(session: { proxyNumber: string; participants: [string, string] }, cause: string) {
    const id = callId('ATVId');
    const call = {
      isActive: '1',
      sessionId: id,
      direction: 'Inbound',
      callerNumber: session.participants[0],
      destinationNumber: session.proxyNumber,
    };
    const answered = await atVoice(call).expect(200);
    const end = await atVoice({
      ...call,
      isActive: '0',
      durationInSeconds: '20',
      dialDestinationNumber: session.participants[1],
      dialDurationInSeconds: cause === 'NORMAL_CLEARING' ? '15' : '0',
      hangupCause: cause,
    }).expect(200);
    return { id, answered, end };
  }

  const ibPost = (route: string, body: unknown, token: string | null = IB.token) =>
    request(broker.url)
      .post(`/v1/providers/failover/${route}${token === null ? '' : `?token=${encodeURIComponent(token)}`}`)
      .set('content-type', 'application/json')
      .send(JSON.stringify(body));

  function callReceived(id: string, from: string, to: string) {
    const event = infobipFixture('call-received.json') as { callId: string; properties: { call: Record<string, unknown> } };
    event.callId = id;
    event.properties.call = { ...event.properties.call, id, from: digits(from), to: digits(to) };
    return event;
  }

  function dialogFinished(parent: string, from: string, proxy: string, to: string) {
    const event = infobipFixture('dialog-finished.json') as { properties: { dialog: Record<string, Record<string, unknown>> } };
    const dialog = event.properties.dialog;
    dialog.parentCall = { ...dialog.parentCall, id: parent, from: digits(from), to: digits(proxy) };
    dialog.childCall = { ...dialog.childCall, from: digits(proxy), to: digits(to) };
    return event;
  }

  const dialogsPosted = () => ibApi.exchanges.filter((e) => e.method === 'POST' && e.path === '/calls/1/dialogs');

  it('bridges calls with the proxy number as caller id on both vendors, fails over, keeps old sessions and recovers on real traffic', async () => {
    // 1. A voice session lands on Africa's Talking; its call is answered with a Dial showing the proxy number.
    const old = await create('voice');
    expect(old).toMatchObject({ provider: 'primary', proxyNumber: expect.stringMatching(/^\+23490100/) });
    const first = await atCall(old, 'NORMAL_CLEARING');
    expect(first.answered.headers['content-type']).toMatch(/application\/xml/);
    expect(xml.parse(first.answered.text).Response.Dial).toEqual({ '@phoneNumbers': old.participants[1], '@callerId': old.proxyNumber });
    expect(await interactions(old.id)).toMatchObject([
      { channel: 'voice', status: 'completed', from: old.participants[0], to: old.participants[1] },
    ]);

    // 2. An SMS session cannot take a voice-only Africa's Talking number: it lands on Infobip, whose relay is a /sms/3/messages send.
    const texting = await create('sms');
    expect(texting).toMatchObject({ provider: 'failover', proxyNumber: expect.stringMatching(/^\+23490200/) });
    const inbound = infobipFixture('inbound-sms.json') as { results: Array<Record<string, unknown>> };
    inbound.results[0] = {
      ...inbound.results[0],
      from: digits(texting.participants[0]),
      to: digits(texting.proxyNumber),
      messageId: 'ib-in-1',
    };
    await ibPost('inbound/sms', inbound).expect(200);
    const sends = ibApi.exchanges.filter((e) => e.path === '/sms/3/messages');
    expect(sends).toHaveLength(1);
    expect(JSON.parse(sends[0].body)).toEqual({
      messages: [
        {
          sender: digits(texting.proxyNumber),
          destinations: [{ to: digits(texting.participants[1]) }],
          content: { text: 'I am at the gate' },
          webhooks: { delivery: { url: `${PUBLIC_URL}/v1/providers/failover/status?token=${IB.token}` } },
        },
      ],
    });
    expect(await interactions(texting.id)).toMatchObject([{ channel: 'sms', status: 'relayed' }]);
    // Its delivery report, to the URL the send named, marks it delivered.
    const report = infobipFixture('delivery-report.json') as { results: Array<Record<string, unknown>> };
    const [{ provider_ref: messageId }] = (await broker.app
      .get(DataSource)
      .query('SELECT provider_ref FROM interactions WHERE session_id = $1', [texting.id])) as Array<{ provider_ref: string }>;
    report.results[0] = { ...report.results[0], messageId, to: digits(texting.participants[1]), sender: digits(texting.proxyNumber) };
    await ibPost('status', report).expect(200);
    expect(await interactions(texting.id)).toMatchObject([{ status: 'delivered' }]);

    // 3. Africa's Talking fails: its API answers 503, and the bridges it cannot set up (5 in a row) open its breaker.
    //    A busy or unanswered callee first: those are answers, not failures of the vendor.
    await atCall(old, 'USER_BUSY');
    await atCall(old, 'NO_ANSWER');
    atApi.always({ kind: 'answer', status: 503, body: 'Service Unavailable', contentType: 'text/plain' });
    for (let i = 0; i < 4; i++) await atCall(old, 'SERVICE_UNAVAILABLE');
    expect(await state('primary')).toBe('CLOSED');
    await atCall(old, 'NETWORK_OUT_OF_ORDER');
    expect(await state('primary')).toBe('OPEN');
    expect((await interactions(old.id)).map((i) => i.status)).toEqual(['completed', 'busy', 'no-answer', ...Array(5).fill('failed')]);

    // 4. New voice sessions land on Infobip numbers; an inbound call there is bridged by a dialog from the proxy number.
    const fresh = [];
    for (let i = 0; i < 3; i++) fresh.push(await create('voice'));
    expect(fresh.map((s) => s.provider)).toEqual(['failover', 'failover', 'failover']);
    expect(fresh.every((s) => IB_NUMBERS.includes(s.proxyNumber))).toBe(true);
    const onInfobip = fresh[0];
    const inboundCall = callId('ib-call');
    await ibPost('inbound/voice', callReceived(inboundCall, onInfobip.participants[0], onInfobip.proxyNumber)).expect(200);
    // Infobip sends the event again (our answer was slow): still one dialog.
    await ibPost('inbound/voice', callReceived(inboundCall, onInfobip.participants[0], onInfobip.proxyNumber)).expect(200);
    expect(dialogsPosted()).toHaveLength(1);
    expect(JSON.parse(dialogsPosted()[0].body)).toEqual({
      parentCallId: inboundCall,
      childCallRequest: {
        endpoint: { type: 'PHONE', phoneNumber: digits(onInfobip.participants[1]) },
        from: digits(onInfobip.proxyNumber),
      },
    });
    expect(await interactions(onInfobip.id)).toMatchObject([{ channel: 'voice', status: 'bridged' }]);
    // The dialog's end comes to the same Calls subscription URL and settles the call.
    await ibPost(
      'inbound/voice',
      dialogFinished(inboundCall, onInfobip.participants[0], onInfobip.proxyNumber, onInfobip.participants[1]),
    ).expect(200);
    expect(await interactions(onInfobip.id)).toMatchObject([{ channel: 'voice', status: 'completed' }]);

    // 5. The old session stays on Africa's Talking and its calls are still bridged there (the Dial needs no API call).
    const during = await atVoice({
      isActive: '1',
      sessionId: callId('ATVId'),
      direction: 'Inbound',
      callerNumber: old.participants[1],
      destinationNumber: old.proxyNumber,
    }).expect(200);
    expect(xml.parse(during.text).Response.Dial).toEqual({ '@phoneNumbers': old.participants[0], '@callerId': old.proxyNumber });

    // 6. Health checks fail while its API is down; once it answers again, 5 passing checks: HALF_OPEN.
    await broker.app.get(HealthProber).tick();
    expect(await state('primary')).toBe('OPEN');
    atApi.always({ kind: 'pass' });
    for (let i = 0; i < 4; i++) {
      await broker.app.get(HealthProber).tick();
      expect(await state('primary')).toBe('OPEN');
    }
    await broker.app.get(HealthProber).tick();
    expect(await state('primary')).toBe('HALF_OPEN');

    // 7. Real traffic is the probe: bridged calls on the old Africa's Talking session complete, with the checks
    //    that keep running, until the close window has passed with enough probes.
    for (let round = 0; round < 60 && (await state('primary')) !== 'CLOSED'; round++) {
      await atCall(old, 'NORMAL_CLEARING');
      await broker.app.get(HealthProber).tick();
      await new Promise((done) => setTimeout(done, 30));
    }
    expect(await state('primary')).toBe('CLOSED');
    const after = [];
    for (let i = 0; i < 3; i++) after.push((await create('voice')).provider);
    expect(after).toEqual(['primary', 'primary', 'primary']);

    // No create failed; the health checks reached Africa's Talking's account read.
    expect(createStatuses.every((s) => s === 201)).toBe(true);
    expect(atMock.requests.some((r) => r.path.startsWith(`/version1/user?username=${AT.username}`))).toBe(true);
  });

  it('refuses token-less, wrong-token and forged webhooks, and relays a replayed one once', async () => {
    const session = await create('voice');
    expect(session.provider).toBe('primary');
    const call = {
      isActive: '1',
      sessionId: callId('ATVId'),
      direction: 'Inbound',
      callerNumber: session.participants[0],
      destinationNumber: session.proxyNumber,
    };
    const noToken = await atVoice(call, null).expect(401);
    expect(noToken.headers['content-type']).toMatch(/application\/problem\+json/);
    await atVoice(call, 'at-token-guessed-' + 'x'.repeat(30)).expect(403);
    // Infobip's token is not Africa's Talking's.
    await atVoice(call, IB.token).expect(403);
    expect(await interactions(session.id)).toEqual([]);

    // A replayed callback (same sessionId) is bridged once.
    await atVoice(call).expect(200);
    await atVoice(call).expect(200);
    expect(await interactions(session.id)).toHaveLength(1);

    // A forged Infobip CALL_RECEIVED (wrong token) asks for no dialog; a body that is not Infobip's is a 400 naming the field.
    const onInfobip = { ...session, proxyNumber: IB_NUMBERS[0] };
    const before = dialogsPosted().length;
    await ibPost('inbound/voice', callReceived(callId('ib-call'), onInfobip.participants[0], onInfobip.proxyNumber), 'forged').expect(403);
    await ibPost('inbound/voice', callReceived(callId('ib-call'), onInfobip.participants[0], onInfobip.proxyNumber), null).expect(401);
    const bad = await ibPost('inbound/voice', { type: 'CALL_RECEIVED', callId: 'x1', properties: {} }).expect(400);
    expect(bad.body.errors[0].field).toBe('properties.call');
    expect(dialogsPosted()).toHaveLength(before);
  });
  it('an Infobip bridge the vendor refuses (503) is a failed call, counted against Infobip; a busy callee is not', async () => {
    // Counted call failures on Infobip, summed over causes.
    const metric = async () =>
      (await request(broker.url).get('/metrics').expect(200)).text
        .split('\n')
        .filter(
          (line) => line.startsWith('cpaas_provider_calls_total{') && /provider="failover"/.test(line) && /operation="call"/.test(line),
        )
        .filter((line) => /counts_against_provider="true"/.test(line))
        .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
    // Africa's Talking is CLOSED again: take a session on Infobip by hand.
    await request(broker.url)
      .post('/v1/admin/providers/primary/disable')
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({})
      .expect(200);
    const session = await create('voice');
    await request(broker.url).post('/v1/admin/providers/primary/enable').set('authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
    expect(session.provider).toBe('failover');
    const counted = await metric();
    ibApi.next({ kind: 'answer', status: 503, body: JSON.stringify({ errorCode: 'E503', description: 'Service unavailable' }) });
    await ibPost('inbound/voice', callReceived(callId('ib-call'), session.participants[0], session.proxyNumber)).expect(200);
    expect(await interactions(session.id)).toMatchObject([{ channel: 'voice', status: 'failed' }]);
    expect(await metric()).toBe(counted + 1);
    // A dialog that ends BUSY is the callee's answer.
    const busyCall = callId('ib-call');
    await ibPost('inbound/voice', callReceived(busyCall, session.participants[1], session.proxyNumber)).expect(200);
    const failed = infobipFixture('dialog-failed.json') as { properties: { dialog: Record<string, Record<string, unknown>> } };
    failed.properties.dialog.parentCall = { ...failed.properties.dialog.parentCall, id: busyCall, from: digits(session.participants[1]) };
    failed.properties.dialog.childCall = { ...failed.properties.dialog.childCall, to: digits(session.participants[0]) };
    await ibPost('inbound/voice', failed).expect(200);
    expect((await interactions(session.id)).map((i) => i.status)).toEqual(['failed', 'busy']);
    expect(await metric()).toBe(counted + 1);
  });
  it('has no number import for either vendor: the operator adds numbers with their capabilities', async () => {
    for (const provider of ['primary', 'failover']) {
      const res = await request(broker.url)
        .post(`/v1/admin/providers/${provider}/numbers/import`)
        .set('authorization', `Bearer ${ADMIN_TOKEN}`)
        .expect(422);
      expect(res.body).toMatchObject({ detail: expect.stringContaining('POST /v1/admin/numbers') });
    }
    const listed = await request(broker.url)
      .get('/v1/admin/numbers?provider=primary')
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(200);
    expect(listed.body.numbers.map((n: { capabilities: string[] }) => n.capabilities)).toEqual([['voice'], ['voice']]);
  });
});
