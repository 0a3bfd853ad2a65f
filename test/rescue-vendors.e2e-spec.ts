/**
 * Session rescue on real vendor protocols (issue #36): primary Twilio (its published OpenAPI description served by
 * Prism, behind the fault proxy), failover Vonage (its account and numbers descriptions served by Prism, its
 * Messages API v1 by the stand-in test/vonage-adapter.e2e-spec.ts checks against @vonage/messages). An account opted
 * in; Twilio's API fails, texts to a session wait, the breaker opens; once afterSeconds have passed on the breakers'
 * clock the session moves to a Vonage number, and the notice and the texts that waited go out with Vonage's Messages
 * API from that number. A Vonage-signed text to the new number is relayed through Vonage; once Twilio is back, a
 * Twilio-signed text to the old number gets the out-of-session answer and nothing is sent. The account without
 * rescue keeps its session on Twilio. No request is refused by a vendor's description.
 */
import { resolve } from 'node:path';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import twilio from 'twilio';
import { vonagePayloadHash } from '@app/cpaas';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { SessionRescue } from '../apps/broker/src/rescue/session-rescue';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, OTHER_API_KEY, createSession, sessionBody } from './support/api-client';
import { advanceBreakerTime } from './support/breaker-time';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { TWILIO_API_SPEC, prismRefusal, startPrism, type PrismServer } from './support/prism';
import { startVonageMessagesMock, type VonageMessagesMock } from './support/vonage-messages-mock';

const FIXTURES = resolve('libs/cpaas/src/vonage/fixtures');
const PUBLIC_URL = 'https://broker.example.com';
const SID = 'AC' + '5e55c0de'.repeat(4);
const TOKEN = 'c0'.repeat(16);
const VONAGE = {
  apiKey: 'abcd1234',
  apiSecret: 'Abcdef0123456789',
  applicationId: 'ffffffff-bbbb-cccc-dddd-0123456789ab',
  signatureSecret: 'vonage-signature-secret-0123456789',
};
const TWILIO_NUMBERS = ['+2349010000101', '+2349010000102'];
const VONAGE_NUMBERS = ['+2349020000101', '+2349020000102'];
const RIDER = '+2348090000101';
const DRIVER = '+2348090000102';
const NOTICE = 'Our number changed: reply here to reach your driver.';
const DOWN = { kind: 'answer', status: 503, body: '{"code":20500,"message":"Internal Server Error","status":503}' } as const;
let sids = 0;
const hex32 = () => (++sids).toString(16).padStart(32, '0');

describe('session rescue from Twilio to Vonage', () => {
  let twilioPrism: PrismServer;
  let accountPrism: PrismServer;
  let numbersPrism: PrismServer;
  let messages: VonageMessagesMock;
  let twilioApi: FaultProxy;
  let vonageApi: FaultProxy;
  let broker: BrokerHarness;

  beforeAll(async () => {
    [twilioPrism, accountPrism, numbersPrism, messages] = await Promise.all([
      startPrism(TWILIO_API_SPEC),
      startPrism(`${FIXTURES}/account.yml`),
      startPrism(`${FIXTURES}/numbers.yml`),
      startVonageMessagesMock(),
    ]);
    twilioApi = await startFaultProxy(twilioPrism.url);
    vonageApi = await startFaultProxy((path) =>
      path.startsWith('/v1/messages') ? messages.url : path.startsWith('/account/get-balance') ? accountPrism.url : numbersPrism.url,
    );
    broker = await startBroker({
      ...AUTH_ENV,
      PROVIDERS: `primary=twilio:${twilioApi.url},failover=vonage:${vonageApi.url}`,
      PUBLIC_URL,
      PROVIDER_PRIMARY_ACCOUNT_SID: SID,
      PROVIDER_PRIMARY_AUTH_TOKEN: TOKEN,
      PROVIDER_FAILOVER_API_KEY: VONAGE.apiKey,
      PROVIDER_FAILOVER_API_SECRET: VONAGE.apiSecret,
      PROVIDER_FAILOVER_APPLICATION_ID: VONAGE.applicationId,
      PROVIDER_FAILOVER_SIGNATURE_SECRET: VONAGE.signatureSecret,
      // Health checks, relay retries and the rescue are driven by the test.
      BREAKER_HEALTH_INTERVAL_MS: '3600000',
      BREAKER_CLOSED_CHECK_INTERVAL_MS: '3600000',
      RELAY_RETRY_INTERVAL_MS: '3600000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
      RESCUE_CHECK_INTERVAL_MS: '3600000',
      RESCUE_MOVES_PER_SECOND: '1000',
      PROVIDER_CALL_TIMEOUT_MS: '2000',
    });
    for (const [provider, numbers] of [
      ['primary', TWILIO_NUMBERS],
      ['failover', VONAGE_NUMBERS],
    ] as const)
      for (const number of numbers)
        await request(broker.url)
          .post('/v1/admin/numbers')
          .set('authorization', `Bearer ${ADMIN_TOKEN}`)
          .send({ provider, number, capabilities: ['sms', 'voice'] })
          .expect(201);
  }, 180_000);

  afterAll(async () => {
    await broker?.close();
    await Promise.all([
      twilioApi?.close(),
      vonageApi?.close(),
      twilioPrism?.close(),
      accountPrism?.close(),
      numbersPrism?.close(),
      messages?.close(),
    ]);
  });

  const get = (path: string, key = API_KEY) => request(broker.url).get(path).set('authorization', `Bearer ${key}`).expect(200);
  const primaryState = async () =>
    (await request(broker.url).get('/v1/health/cpaas').expect(200)).body.providers.find((p: { name: string }) => p.name === 'primary')
      .state;
  const twilioMessages = () =>
    twilioApi.exchanges
      .filter((e) => e.method === 'POST' && e.path.endsWith('/Messages.json') && e.fault === 'pass')
      .map((e) => Object.fromEntries(new URLSearchParams(e.body)));
  const vonageMessages = () => messages.requests.map((r) => JSON.parse(r.body) as Record<string, string>);

  function twilioInbound(from: string, to: string, text: string) {
    const params = { AccountSid: SID, MessageSid: `SM${hex32()}`, From: from, To: to, Body: text };
    const signature = twilio.getExpectedTwilioSignature(TOKEN, `${PUBLIC_URL}/v1/providers/primary/inbound/sms`, params);
    return request(broker.url).post('/v1/providers/primary/inbound/sms').set('x-twilio-signature', signature).type('form').send(params);
  }

  function vonageInbound(from: string, to: string, text: string) {
    const raw = JSON.stringify({
      channel: 'sms',
      message_type: 'text',
      message_uuid: `aaaaaaaa-bbbb-cccc-dddd-${hex32().slice(-12)}`,
      from: from.slice(1),
      to: to.slice(1),
      text,
      timestamp: new Date().toISOString(),
    });
    const token = jwt.sign(
      {
        iat: Math.floor(Date.now() / 1000),
        jti: `jti-${hex32()}`,
        iss: 'Vonage',
        payload_hash: vonagePayloadHash(raw),
        api_key: VONAGE.apiKey,
        application_id: VONAGE.applicationId,
      },
      VONAGE.signatureSecret,
      { algorithm: 'HS256' },
    );
    return request(broker.url)
      .post('/v1/providers/failover/inbound/sms')
      .set('content-type', 'application/json')
      .set('authorization', `Bearer ${token}`)
      .send(raw);
  }

  it('moves the session to a Vonage number and texts the notice and the waiting texts with Vonage’s Messages API from it', async () => {
    await request(broker.url)
      .put('/v1/account/rescue')
      .set('authorization', `Bearer ${API_KEY}`)
      .send({ afterSeconds: 60, notice: NOTICE })
      .expect(200);
    const session = (
      await createSession(broker.url, sessionBody([RIDER, DRIVER], { channel: undefined, channels: ['voice', 'sms'] })).expect(201)
    ).body as { id: string; provider: string; proxyNumber: string };
    const control = (await createSession(broker.url, sessionBody(['+2348090000201', '+2348090000202']), OTHER_API_KEY).expect(201))
      .body as { id: string; provider: string; proxyNumber: string };
    expect([session.provider, control.provider]).toEqual(['primary', 'primary']);
    const oldNumber = session.proxyNumber;

    // Twilio's API fails: the rider's texts wait, and the 5th counted fault opens the breaker.
    twilioApi.always(DOWN);
    for (let i = 0; i < 5; i++) expect((await twilioInbound(RIDER, oldNumber, `waiting ${i}`)).status).toBe(200);
    expect(await primaryState()).toBe('OPEN');
    expect((await get(`/v1/sessions/${session.id}/interactions`)).body.interactions.map((i: { status: string }) => i.status)).toEqual(
      Array(5).fill('pending'),
    );

    // Not yet: 30 s of 60 on the breakers' clock.
    advanceBreakerTime(broker, 30_000);
    await broker.app.get(SessionRescue).runOnce();
    expect((await get(`/v1/sessions/${session.id}`)).body.provider).toBe('primary');
    expect(messages.requests).toEqual([]);

    advanceBreakerTime(broker, 30_000);
    await broker.app.get(SessionRescue).runOnce();
    const moved = (await get(`/v1/sessions/${session.id}`)).body as {
      provider: string;
      proxyNumber: string;
      numberHistory: Array<{ provider: string; proxyNumber: string }>;
    };
    expect(moved.provider).toBe('failover');
    expect(VONAGE_NUMBERS).toContain(moved.proxyNumber);
    expect(moved.numberHistory.map((n) => [n.provider, n.proxyNumber])).toEqual([
      ['primary', oldNumber],
      ['failover', moved.proxyNumber],
    ]);
    expect((await get(`/v1/sessions/${control.id}`, OTHER_API_KEY)).body.provider).toBe('primary');
    const events = (await get(`/v1/events?session=${session.id}`)).body.events as Array<{ type: string; data: Record<string, unknown> }>;
    expect(events.filter((e) => e.type === 'session.rebound').map((e) => e.data)).toEqual([
      expect.objectContaining({
        from: { provider: 'primary', proxyNumber: oldNumber },
        to: { provider: 'failover', proxyNumber: moved.proxyNumber },
      }),
    ]);

    // Vonage's send API, from the new number: the notice to each participant, then the texts that waited on Twilio.
    const from = moved.proxyNumber.slice(1);
    const webhookUrl = `${PUBLIC_URL}/v1/providers/failover/status`;
    const sent = vonageMessages();
    expect(
      sent
        .filter((m) => m.text === NOTICE)
        .map((m) => m.to)
        .sort(),
    ).toEqual([RIDER.slice(1), DRIVER.slice(1)].sort());
    expect(
      sent
        .filter((m) => m.text.startsWith('waiting '))
        .map((m) => m.text)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4].map((i) => `waiting ${i}`));
    for (const m of sent) expect(m).toMatchObject({ channel: 'sms', message_type: 'text', from, webhook_url: webhookUrl });
    expect(sent.filter((m) => m.text.startsWith('waiting ')).every((m) => m.to === DRIVER.slice(1))).toBe(true);
    const statuses = (await get(`/v1/sessions/${session.id}/interactions`)).body.interactions.map((i: { status: string }) => i.status);
    expect(statuses).toEqual(Array(7).fill('relayed'));

    // The driver answers the new number: relayed through Vonage.
    const before = messages.requests.length;
    expect((await vonageInbound(DRIVER, moved.proxyNumber, 'on my way')).status).toBe(200);
    expect(vonageMessages().slice(before)).toEqual([expect.objectContaining({ from, to: RIDER.slice(1), text: 'on my way' })]);

    // Twilio is back: a text to the old number is answered out of session on Twilio, and relayed nowhere.
    twilioApi.always({ kind: 'pass' });
    for (let i = 0; i < 5; i++) await broker.app.get(HealthProber).tick();
    expect(await primaryState()).toBe('HALF_OPEN');
    const twilioBefore = twilioMessages().length;
    const vonageBefore = messages.requests.length;
    const stray = await twilioInbound(RIDER, oldNumber, 'hello?');
    expect(stray.status).toBeLessThan(500);
    expect(twilioMessages().length).toBe(twilioBefore);
    expect(messages.requests.length).toBe(vonageBefore);
    const after = (await get(`/v1/events?session=${session.id}`)).body.events as Array<{ type: string; data: Record<string, unknown> }>;
    expect(after.find((e) => e.type === 'interaction.out_of_session')?.data).toMatchObject({
      reason: 'session-rebound',
      provider: 'primary',
      proxyNumber: oldNumber,
      movedTo: { provider: 'failover', proxyNumber: moved.proxyNumber },
    });

    expect(twilioApi.refusals(prismRefusal)).toEqual([]);
    expect(vonageApi.refusals(prismRefusal)).toEqual([]);
  });
});
