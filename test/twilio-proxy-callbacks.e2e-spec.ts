/**
 * Twilio Proxy's callbacks from the broker (issue #35 item 3): a Service's CallbackUrl, InterceptCallbackUrl and
 * OutOfSessionCallbackUrl receive form-encoded requests with X-Twilio-Signature over their full URL, which a
 * receiver written for Proxy verifies with `twilio.validateRequest` (keyed with the account's webhook secret);
 * an intercept answering 403 blocks the text, as in Proxy.
 */
import request from 'supertest';
import twilio from 'twilio';
import { WebhookReceiver, type ReceivedWebhook } from '@app/testing';
import { API_KEY, AUTH_ENV } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { simCalls, simInbound } from './support/sim-control';
import { ValidatingRequestClient, dedicateNumbers } from './support/twilio-proxy-client';

const A = '+2348034002001';
const B = '+2348034002002';
const STRANGER = '+2348034002003';

describe('Twilio Proxy callbacks, signed as Twilio signs them', () => {
  let broker: BrokerHarness;
  let receiver: WebhookReceiver;
  let http: ValidatingRequestClient;
  let client: twilio.Twilio;
  let secret: string;
  let service: { sid: string };
  let proxyNumber: string;
  let provider: string;
  let participants: Array<{ sid: string; identifier: string }>;
  let sessionSid: string;

  const form = (hook: ReceivedWebhook) => Object.fromEntries(new URLSearchParams(hook.body));
  const at = (path: string) => receiver.received.filter((r) => r.path === path);
  /** What a Proxy receiver does with each request: the URL it was called at, the form parameters, the signature. */
  const verifies = (hook: ReceivedWebhook, key = secret) =>
    twilio.validateRequest(key, String(hook.headers['x-twilio-signature']), `http://127.0.0.1:${receiver.port}${hook.path}`, form(hook));

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    // The intercept refuses any text that says so, as a receiver would.
    receiver.answer = (hook) => ({
      status: hook.path.startsWith('/intercept') && /blocked/.test(form(hook).interactionData ?? '') ? 403 : 200,
    });
    broker = await startBroker({ ...AUTH_ENV, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' });
    const account = (await request(broker.url).get('/v1/account').set('authorization', `Bearer ${API_KEY}`).expect(200)).body;
    secret = (await request(broker.url).post('/v1/account/webhook-secret/reveal').set('authorization', `Bearer ${API_KEY}`).expect(200))
      .body.secret;
    http = new ValidatingRequestClient(`${broker.url}/compat/twilio-proxy`);
    client = twilio(account.twilioAccountSid, API_KEY, { httpClient: http });
    const base = `http://127.0.0.1:${receiver.port}`;
    service = await client.proxy.v1.services.create({
      uniqueName: 'callbacks',
      callbackUrl: `${base}/callback?service=rides`,
      interceptCallbackUrl: `${base}/intercept`,
      outOfSessionCallbackUrl: `${base}/out-of-session`,
    });
    for (const number of await dedicateNumbers(broker.url, account.id, 'primary', 2))
      await client.proxy.v1.services(service.sid).phoneNumbers.create({ phoneNumber: number.number });
    const session = await client.proxy.v1.services(service.sid).sessions.create({ mode: 'message-only' });
    sessionSid = session.sid;
    await client.proxy.v1.services(service.sid).sessions(session.sid).participants.create({ identifier: A });
    const second = await client.proxy.v1.services(service.sid).sessions(session.sid).participants.create({ identifier: B });
    proxyNumber = second.proxyIdentifier;
    provider = 'primary';
    participants = await client.proxy.v1.services(service.sid).sessions(session.sid).participants.list();
  }, 120_000);

  afterAll(async () => {
    await broker?.close();
    await receiver?.close();
  });

  afterEach(() => expect(http.failures).toEqual([]));

  it('asks the intercept in Twilio’s format before relaying, then tells the CallbackUrl what became of the text', async () => {
    await simInbound(broker.sim.url, provider, { channel: 'sms', from: A, to: proxyNumber, text: 'at the gate' });
    const [asked] = at('/intercept');
    expect(asked.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(verifies(asked)).toBe(true);
    expect(verifies(asked, 'whsec_not-the-secret')).toBe(false);
    expect(form(asked)).toMatchObject({
      interactionSessionSid: sessionSid,
      interactionServiceSid: service.sid,
      interactionType: 'Message',
      interactionData: JSON.stringify({ body: 'at the gate' }),
      inboundParticipantSid: participants[0].sid,
      outboundParticipantSid: participants[1].sid,
      inboundResourceType: 'message',
    });
    await eventually(async () => at('/callback?service=rides').length === 1, 200);
    const [told] = at('/callback?service=rides');
    // Signed over the full URL, its query included, as Twilio signs.
    expect(verifies(told)).toBe(true);
    expect(told.headers['i-twilio-idempotency-token']).toMatch(/^[0-9a-f-]{36}$/);
    expect(form(told)).toMatchObject({
      interactionSid: form(asked).interactionSid,
      interactionSessionSid: sessionSid,
      interactionAccountSid: expect.stringMatching(/^AC[0-9a-f]{32}$/),
      inboundParticipantSid: participants[0].sid,
      inboundResourceStatus: 'delivered',
      outboundParticipantSid: participants[1].sid,
      outboundResourceStatus: 'sent',
      outboundResourceType: 'message',
    });
  });

  it('blocks a text its intercept answers 403: nothing is relayed, the interaction says so, no callback follows', async () => {
    const before = at('/callback?service=rides').length;
    await simInbound(broker.sim.url, provider, { channel: 'sms', from: B, to: proxyNumber, text: 'this one is blocked' });
    expect(at('/intercept')).toHaveLength(2);
    expect((await simCalls(broker.sim.url, provider, 'sms')).filter((c) => c.text === 'this one is blocked')).toEqual([]);
    const [latest] = await client.proxy.v1.services(service.sid).sessions(sessionSid).interactions.list({ limit: 1 });
    expect(latest).toMatchObject({ inboundParticipantSid: participants[1].sid, outboundResourceStatus: undefined });
    expect(JSON.parse(latest.data)).toEqual({ body: 'this one is blocked' });
    // A MessageInteraction is the app's own: no intercept; its callback follows.
    await client.proxy.v1
      .services(service.sid)
      .sessions(sessionSid)
      .participants(participants[0].sid)
      .messageInteractions.create({ body: 'hi' });
    await eventually(async () => at('/callback?service=rides').length === before + 1, 200);
    expect(form(at('/callback?service=rides').at(-1)!)).toMatchObject({
      outboundParticipantSid: participants[0].sid,
      outboundResourceStatus: 'sent',
    });
    expect(form(at('/callback?service=rides').at(-1)!).inboundParticipantSid).toBeUndefined();
    expect(at('/intercept')).toHaveLength(2);
  });

  it('tells the OutOfSessionCallbackUrl of a text from someone with no session on the Service’s number', async () => {
    await simInbound(broker.sim.url, provider, { channel: 'sms', from: STRANGER, to: proxyNumber, text: 'who is this?' });
    await eventually(async () => at('/out-of-session').length === 1, 200);
    const [told] = at('/out-of-session');
    expect(verifies(told)).toBe(true);
    expect(form(told)).toMatchObject({
      From: STRANGER,
      To: proxyNumber,
      Body: 'who is this?',
      interactionServiceSid: service.sid,
      inboundResourceType: 'message',
    });
  });
});
