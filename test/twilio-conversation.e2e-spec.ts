/**
 * One conversation session on Twilio, end to end over HTTP (PROVIDERS=primary=twilio:<fault proxy → Prism serving
 * Twilio's OpenAPI description>): the rider's text and the driver's call reach one proxy number and are both
 * relayed (Messages.json, then <Dial callerId>), and the app's message goes out with Messages.json from that
 * number. Webhooks are signed with the `twilio` package's own helper; every request the adapter sends must be
 * one Prism accepts.
 */
import { XMLParser } from 'fast-xml-parser';
import request from 'supertest';
import twilio from 'twilio';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, createSession, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { TWILIO_API_SPEC, prismRefusal, startPrism, type PrismServer } from './support/prism';

const SID = 'AC' + 'c0ffee00'.repeat(4);
const TOKEN = '9f8e7d6c'.repeat(4);
const PUBLIC_URL = 'https://broker.example.com';
const PROXY = '+2349030000002';
const RIDER = '+2348030002001';
const DRIVER = '+2348030002002';
let sids = 0;
const sid = (prefix: 'SM' | 'CA') => `${prefix}${String(++sids).padStart(32, '0')}`;

describe('a conversation session on Twilio', () => {
  let prism: PrismServer;
  let proxy: FaultProxy;
  let broker: BrokerHarness;
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' });

  const webhook = (route: string, params: Record<string, string>) => {
    const path = `/v1/providers/primary/${route}`;
    return request(broker.url)
      .post(path)
      .set('content-type', 'application/x-www-form-urlencoded')
      .set('x-twilio-signature', twilio.getExpectedTwilioSignature(TOKEN, `${PUBLIC_URL}${path}`, params))
      .send(new URLSearchParams(params).toString());
  };
  const messagesSent = () =>
    proxy.exchanges
      .filter((e) => e.method === 'POST' && e.path === `/2010-04-01/Accounts/${SID}/Messages.json`)
      .map((e) => Object.fromEntries(new URLSearchParams(e.body)));
  const interactions = async (id: string) =>
    (await request(broker.url).get(`/v1/sessions/${id}/interactions`).set('authorization', `Bearer ${API_KEY}`).expect(200)).body
      .interactions as Array<{ channel: string; from: string; to: string; status: string }>;

  beforeAll(async () => {
    prism = await startPrism(TWILIO_API_SPEC);
    proxy = await startFaultProxy(prism.url);
    broker = await startBroker({
      ...AUTH_ENV,
      PROVIDERS: `primary=twilio:${proxy.url}`,
      PUBLIC_URL,
      PROVIDER_PRIMARY_ACCOUNT_SID: SID,
      PROVIDER_PRIMARY_AUTH_TOKEN: TOKEN,
      RELAY_RETRY_INTERVAL_MS: '3600000',
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
    await request(broker.url)
      .post('/v1/admin/numbers')
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ provider: 'primary', number: PROXY })
      .expect(201);
  }, 120_000);
  afterAll(async () => {
    await broker?.close();
    await proxy?.close();
    await prism?.close();
  });
  afterEach(() => expect(proxy.refusals(prismRefusal)).toEqual([]));

  it('relays the rider’s text and bridges the driver’s call through one proxy number, and sends the app’s message from it', async () => {
    const before = proxy.exchanges.length;
    const session = (
      await createSession(broker.url, sessionBody([RIDER, DRIVER], { channel: undefined, channels: ['voice', 'sms'] })).expect(201)
    ).body;
    expect(session).toMatchObject({ provider: 'primary', proxyNumber: PROXY, channels: ['voice', 'sms'] });
    // Twilio keeps no sessions: the create made no call to it.
    expect(proxy.exchanges.length).toBe(before);

    const messageSid = sid('SM');
    const text = await webhook('inbound/sms', {
      AccountSid: SID,
      MessageSid: messageSid,
      SmsSid: messageSid,
      From: RIDER,
      To: PROXY,
      Body: 'I am at gate 3',
      NumMedia: '0',
    }).expect(200);
    expect(xml.parse(text.text)).toEqual(xml.parse(new twilio.twiml.MessagingResponse().toString()));

    const call = await webhook('inbound/voice', {
      AccountSid: SID,
      CallSid: sid('CA'),
      From: DRIVER,
      To: PROXY,
      CallStatus: 'ringing',
    }).expect(200);
    const dial = new twilio.twiml.VoiceResponse();
    dial.dial({ callerId: PROXY, action: `${PUBLIC_URL}/v1/providers/primary/status`, method: 'POST' }).number(RIDER);
    expect(xml.parse(call.text)).toEqual(xml.parse(dial.toString()));

    const sent = await request(broker.url)
      .post(`/v1/sessions/${session.id}/messages`)
      .set('authorization', `Bearer ${API_KEY}`)
      .send({ to: RIDER, text: 'Your driver has arrived' })
      .expect(202);
    expect(sent.body).toMatchObject({ channel: 'sms', from: PROXY, to: RIDER, status: 'relayed' });

    const statusCallback = `${PUBLIC_URL}/v1/providers/primary/status`;
    expect(messagesSent()).toEqual([
      { From: PROXY, To: DRIVER, Body: 'I am at gate 3', StatusCallback: statusCallback },
      { From: PROXY, To: RIDER, Body: 'Your driver has arrived', StatusCallback: statusCallback },
    ]);
    expect((await interactions(session.id)).map((i) => [i.channel, i.from, i.to, i.status])).toEqual([
      ['sms', RIDER, DRIVER, 'relayed'],
      ['voice', DRIVER, RIDER, 'bridged'],
      ['sms', PROXY, RIDER, 'relayed'],
    ]);
  });

  it('rejects a call into a session that carries only texts, with Twilio’s <Reject/>, and bridges nothing', async () => {
    const caller = '+2348030002011';
    const session = (await createSession(broker.url, sessionBody([caller, '+2348030002012'], { channel: 'sms' })).expect(201)).body;
    const call = await webhook('inbound/voice', {
      AccountSid: SID,
      CallSid: sid('CA'),
      From: caller,
      To: PROXY,
      CallStatus: 'ringing',
    }).expect(200);
    const reject = new twilio.twiml.VoiceResponse();
    reject.reject();
    expect(xml.parse(call.text)).toEqual(xml.parse(reject.toString()));
    expect(await interactions(session.id)).toEqual([expect.objectContaining({ channel: 'voice', status: 'out-of-session' })]);
  });
});
