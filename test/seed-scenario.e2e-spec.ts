/**
 * The seed scenario on real vendor protocols (docs/providers.md, #12): primary Twilio and failover Vonage,
 * each adapter talking to its vendor's published description served by Prism (Vonage's Messages
 * API v1, newer than its descriptions, to a stand-in checked against @vonage/messages in
 * vonage-adapter.e2e-spec.ts), behind the fault proxy. Twilio's API fails (503s and resets), new
 * sessions move to Vonage, old ones stay on Twilio and their relays wait durably; Twilio recovers
 * through 5 health checks, HALF_OPEN with every 10th session on it, and CLOSED after a shortened
 * close window. No create fails, no relay is lost, no request is refused by a vendor description.
 */
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { resolve } from 'node:path';
import Ajv from 'ajv';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import twilio from 'twilio';
import { DataSource } from 'typeorm';
import { vonagePayloadHash } from '@app/cpaas';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { RelayService } from '../apps/broker/src/relay/relay.service';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, createSession, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { TWILIO_API_SPEC, prismRefusal, startPrism, type PrismServer } from './support/prism';
import { startVonageMessagesMock, type VonageMessagesMock } from './support/vonage-messages-mock';

const FIXTURES = resolve('libs/cpaas/src/vonage/fixtures');
const PUBLIC_URL = 'https://broker.example.com';
const SID = 'AC' + '0123456789abcdef'.repeat(2);
const TOKEN = 'fe'.repeat(16);
const VONAGE = {
  apiKey: 'abcd1234',
  apiSecret: 'Abcdef0123456789',
  applicationId: 'ffffffff-bbbb-cccc-dddd-0123456789ab',
  signatureSecret: 'vonage-signature-secret-0123456789',
};
const TWILIO_NUMBERS = ['+2349010000001', '+2349010000002'];
const VONAGE_NUMBERS = ['+2349020000001', '+2349020000002'];

let pairs = 0;
const pair = (): [string, string] => {
  pairs += 1;
  const base = 2348050000000 + pairs * 2;
  return [`+${base}`, `+${base + 1}`];
};
let sids = 0;
const hex32 = () => (++sids).toString(16).padStart(32, '0');

describe('seed scenario: primary Twilio, failover Vonage', () => {
  let twilioPrism: PrismServer;
  let accountPrism: PrismServer;
  let numbersPrism: PrismServer;
  let messages: VonageMessagesMock;
  let twilioApi: FaultProxy;
  let vonageApi: FaultProxy;
  let broker: BrokerHarness;
  let sse = '';
  let closeSse: () => void = () => undefined;
  const createStatuses: number[] = [];

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
      BREAKER_HEALTH_INTERVAL_MS: '3600000', // health rounds are driven by the test
      BREAKER_CLOSED_CHECK_INTERVAL_MS: '3600000',
      BREAKER_CLOSE_AFTER_MS: '300', // the shortened close window
      PROVIDER_CALL_TIMEOUT_MS: '2000',
      RELAY_RETRY_INTERVAL_MS: '3600000', // retries are driven by the test
      SESSION_SWEEP_INTERVAL_MS: '3600000',
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
    const stream = get(`${broker.url}/v1/health/cpaas/stream`, (res) => res.on('data', (chunk: Buffer) => (sse += chunk.toString())));
    closeSse = () => stream.destroy();
  }, 180_000);

  afterAll(async () => {
    closeSse();
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

  async function create(): Promise<{ id: string; provider: string; proxyNumber: string; participants: [string, string] }> {
    const participants = pair();
    // Texts and calls both go through these sessions: they carry both channels (a channel is enforced).
    const res = await createSession(broker.url, sessionBody(participants, { channel: undefined, channels: ['voice', 'sms'] }));
    createStatuses.push(res.status);
    return { ...(res.body as { id: string; provider: string; proxyNumber: string }), participants };
  }

  async function primaryState(): Promise<{ cpaas: string; metric: string }> {
    const health = await request(broker.url).get('/v1/health/cpaas').expect(200);
    const metrics = await request(broker.url).get('/metrics').expect(200);
    const gauge = /cpaas_breaker_state\{provider="primary"\} (\d)/.exec(metrics.text)?.[1] ?? '?';
    return { cpaas: health.body.providers.find((p: { name: string }) => p.name === 'primary').state, metric: gauge };
  }

  function twilioInbound(session: { proxyNumber: string; participants: [string, string] }, text: string) {
    const params = { AccountSid: SID, MessageSid: `SM${hex32()}`, From: session.participants[0], To: session.proxyNumber, Body: text };
    const signature = twilio.getExpectedTwilioSignature(TOKEN, `${PUBLIC_URL}/v1/providers/primary/inbound/sms`, params);
    return request(broker.url).post('/v1/providers/primary/inbound/sms').set('x-twilio-signature', signature).type('form').send(params);
  }

  function vonageSigned(
    path: string,
    body: object | string,
    options: { secret?: string; applicationId?: string; signedBody?: string; token?: false } = {},
  ) {
    const raw = typeof body === 'string' ? body : JSON.stringify(body);
    const token = jwt.sign(
      {
        iat: Math.floor(Date.now() / 1000),
        jti: `jti-${hex32()}`,
        iss: 'Vonage',
        payload_hash: vonagePayloadHash(options.signedBody ?? raw),
        api_key: VONAGE.apiKey,
        application_id: options.applicationId ?? VONAGE.applicationId,
      },
      options.secret ?? VONAGE.signatureSecret,
      { algorithm: 'HS256' },
    );
    const req = request(broker.url).post(path).set('content-type', 'application/json');
    if (options.token !== false) req.set('authorization', `Bearer ${token}`);
    return req.send(raw);
  }

  async function interactions(sessionId: string): Promise<Array<{ status: string; from: string; to: string }>> {
    const res = await request(broker.url)
      .get(`/v1/sessions/${sessionId}/interactions`)
      .set('authorization', `Bearer ${API_KEY}`)
      .expect(200);
    return res.body.interactions;
  }

  async function retryPendingRelays(): Promise<void> {
    await broker.app.get(DataSource).query(`UPDATE interactions SET next_attempt_at = now() WHERE status = 'pending'`);
    await broker.app.get(RelayService).retryDue();
  }

  it('fails over to Vonage, keeps old sessions on Twilio without losing a relay, and recovers', async () => {
    // 1. Sessions on the primary, Twilio numbers; no vendor call on create.
    const old = await create();
    expect(old).toMatchObject({ provider: 'primary', proxyNumber: expect.stringMatching(/^\+23490100/) });
    expect(await primaryState()).toEqual({ cpaas: 'CLOSED', metric: '0' });

    // 2. Twilio's API fails: the old session's relays fail and wait, and the 5th counted fault opens the breaker.
    twilioApi.next({ kind: 'answer', status: 503, body: '{"code":20500,"message":"Internal Server Error"}' }, { kind: 'reset' });
    twilioApi.always({ kind: 'answer', status: 503, body: '{"code":20500,"message":"Internal Server Error"}' });
    for (let i = 0; i < 5; i++) expect((await twilioInbound(old, `during outage ${i}`)).status).toBe(200);
    expect(await primaryState()).toEqual({ cpaas: 'OPEN', metric: '2' });
    expect((await interactions(old.id)).map((i) => i.status)).toEqual(Array(5).fill('pending'));

    // 3. Creates keep answering 201, now on the failover with Vonage numbers.
    const fresh = [];
    for (let i = 0; i < 5; i++) fresh.push(await create());
    expect(fresh.map((s) => s.provider)).toEqual(Array(5).fill('failover'));
    expect(fresh.every((s) => VONAGE_NUMBERS.includes(s.proxyNumber))).toBe(true);

    // 4. A Vonage-signed inbound SMS on a new session relays through Vonage, from the proxy number; its receipt lands.
    const onVonage = fresh[0];
    const before = messages.requests.length;
    const inboundSms = {
      channel: 'sms',
      message_type: 'text',
      message_uuid: 'aaaaaaaa-bbbb-cccc-dddd-000000000001',
      from: onVonage.participants[0].slice(1),
      to: onVonage.proxyNumber.slice(1),
      text: 'hello through Vonage',
      timestamp: new Date().toISOString(),
    };
    expect((await vonageSigned('/v1/providers/failover/inbound/sms', inboundSms)).status).toBe(200);
    const sent = messages.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0].body)).toMatchObject({
      channel: 'sms',
      from: onVonage.proxyNumber.slice(1),
      to: onVonage.participants[1].slice(1),
      text: 'hello through Vonage',
      webhook_url: `${PUBLIC_URL}/v1/providers/failover/status`,
    });
    expect(await interactions(onVonage.id)).toMatchObject([
      { status: 'relayed', from: onVonage.participants[0], to: onVonage.participants[1] },
    ]);
    // The same webhook again (Vonage retries when our answer is slow) is not relayed twice.
    expect((await vonageSigned('/v1/providers/failover/inbound/sms', inboundSms)).status).toBe(200);
    expect(messages.requests).toHaveLength(before + 1);
    // Vonage's delivery receipt for the relayed message updates the interaction.
    const [{ provider_ref: messageUuid }] = (await broker.app
      .get(DataSource)
      .query(`SELECT provider_ref FROM interactions WHERE session_id = $1`, [onVonage.id])) as Array<{ provider_ref: string }>;
    const receipt = await vonageSigned('/v1/providers/failover/status', {
      message_uuid: messageUuid,
      to: onVonage.participants[1].slice(1),
      from: onVonage.proxyNumber.slice(1),
      timestamp: new Date().toISOString(),
      status: 'delivered',
      channel: 'sms',
    });
    expect(receipt.status).toBe(200);
    expect(await interactions(onVonage.id)).toMatchObject([{ status: 'delivered' }]);

    // 5. Still failing: the old session's relays are retried through Twilio, and wait again.
    await retryPendingRelays();
    expect((await interactions(old.id)).map((i) => i.status)).toEqual(Array(5).fill('pending'));

    // 6. Twilio recovers: still OPEN until the 5th passing health check, then HALF_OPEN.
    twilioApi.always({ kind: 'pass' });
    for (let i = 0; i < 4; i++) {
      await broker.app.get(HealthProber).tick();
      expect((await primaryState()).cpaas).toBe('OPEN');
    }
    await broker.app.get(HealthProber).tick();
    expect(await primaryState()).toEqual({ cpaas: 'HALF_OPEN', metric: '1' });

    // 7. HALF_OPEN: every 10th new session goes to Twilio.
    const halfOpen = [];
    for (let i = 0; i < 20; i++) halfOpen.push(await create());
    expect(halfOpen.map((s, i) => [i + 1, s.provider]).filter(([, p]) => p === 'primary')).toEqual([
      [10, 'primary'],
      [20, 'primary'],
    ]);

    // 8. The waiting relays go out through Twilio now: none lost. On Twilio (no vendor sessions) every text
    // it carries is a probe: 5 of the 10 the close gate needs (BREAKER_CLOSE_MIN_PROBES).
    await retryPendingRelays();
    expect((await interactions(old.id)).map((i) => i.status)).toEqual(Array(5).fill('relayed'));

    // 9. Passing health checks alone never close it: the probe sessions' texts do, after the shortened close window.
    await new Promise((done) => setTimeout(done, 300));
    await broker.app.get(HealthProber).tick();
    expect((await primaryState()).cpaas).toBe('HALF_OPEN');
    const probeSessions = halfOpen.filter((s) => s.provider === 'primary');
    for (let i = 0; i < 5; i++) expect((await twilioInbound(probeSessions[i % 2], `after recovery ${i}`)).status).toBe(200);
    expect(await primaryState()).toEqual({ cpaas: 'CLOSED', metric: '0' });
    const after = [];
    for (let i = 0; i < 3; i++) after.push((await create()).provider);
    expect(after).toEqual(['primary', 'primary', 'primary']);

    // 0 failed creates; every transition on the SSE stream; no request refused by a vendor's description.
    expect(createStatuses.every((s) => s === 201)).toBe(true);
    for (const state of ['OPEN', 'HALF_OPEN', 'CLOSED'])
      expect(sse).toMatch(new RegExp(`"provider":"primary"[^\\n]*"to":"${state}"|"to":"${state}"[^\\n]*"provider":"primary"`));
    expect(twilioApi.refusals(prismRefusal)).toEqual([]);
    expect(vonageApi.refusals(prismRefusal)).toEqual([]);
  });

  it('bridges a call on a Vonage session with a schema-valid NCCO; its leg events decide the outcome', async () => {
    const ajv = new Ajv({ schemaId: 'auto', allErrors: true });
    ajv.addMetaSchema(JSON.parse(readFileSync('node_modules/ajv/lib/refs/json-schema-draft-04.json', 'utf8')) as object);
    const validNcco = ajv.compile(JSON.parse(readFileSync(`${FIXTURES}/ncco-schema.json`, 'utf8')) as object);
    const list = await request(broker.url)
      .get('/v1/sessions?status=active&limit=100')
      .set('authorization', `Bearer ${API_KEY}`)
      .expect(200);
    const sessions = (list.body.sessions ?? list.body.items ?? list.body.data) as Array<{
      id: string;
      provider: string;
      proxyNumber: string;
      participants: Array<{ number: string }>;
    }>;
    const onVonage = sessions.filter((x) => x.provider === 'failover').slice(-2);
    expect(onVonage).toHaveLength(2);

    for (const [session, legStatus] of [
      [onVonage[0], 'busy'],
      [onVonage[1], 'failed'],
    ] as const) {
      const [caller, callee] = session.participants.map((p) => p.number);
      const callUuid = `aaaaaaaa-0000-0000-0000-${hex32().slice(-12)}`;
      const answer = await vonageSigned('/v1/providers/failover/inbound/voice', {
        from: caller.slice(1),
        to: session.proxyNumber.slice(1),
        uuid: callUuid,
        conversation_uuid: `CON-${callUuid}`,
      });
      expect(answer.status).toBe(200);
      const ncco = JSON.parse(answer.text) as Array<{ action: string; eventUrl: string[] }>;
      expect(validNcco(ncco) ? [] : validNcco.errors).toEqual([]);
      expect(ncco[0]).toMatchObject({
        action: 'connect',
        from: session.proxyNumber.slice(1),
        endpoint: [{ type: 'phone', number: callee.slice(1) }],
      });
      const eventUrl = new URL(ncco[0].eventUrl[0]);
      expect(`${eventUrl.origin}${eventUrl.pathname}`).toBe(`${PUBLIC_URL}/v1/providers/failover/status`);
      const leg = {
        from: session.proxyNumber.slice(1),
        to: callee.slice(1),
        uuid: `bbbbbbbb-${callUuid.slice(9)}`,
        conversation_uuid: `CON-${callUuid}`,
        direction: 'outbound',
      };
      const path = `${eventUrl.pathname}${eventUrl.search}`;
      expect((await vonageSigned(path, { ...leg, status: 'ringing', timestamp: new Date().toISOString() })).status).toBe(200);
      expect((await vonageSigned(path, { ...leg, status: legStatus, timestamp: new Date().toISOString() })).status).toBe(200);
      const calls = (await interactions(session.id)).filter((i) => (i as { channel?: string }).channel === 'voice');
      expect(calls).toMatchObject([{ status: legStatus }]);
    }
    // One call-setup failure counted against Vonage is not enough to open it.
    const health = await request(broker.url).get('/v1/health/cpaas').expect(200);
    expect(health.body.providers.find((p: { name: string }) => p.name === 'failover').state).toBe('CLOSED');
  });

  it('ties a Vonage leg event to its call only by the signed eventUrl: a completed C1 posted with ?call=C2 settles nothing (issue #29)', async () => {
    const list = await request(broker.url)
      .get('/v1/sessions?status=active&limit=100')
      .set('authorization', `Bearer ${API_KEY}`)
      .expect(200);
    const onVonage = (
      list.body.sessions as Array<{ id: string; provider: string; proxyNumber: string; participants: Array<{ number: string }> }>
    )
      .filter((x) => x.provider === 'failover')
      .slice(-2);
    const bridge = async (session: (typeof onVonage)[number]) => {
      const [caller, callee] = session.participants.map((p) => p.number);
      const uuid = `cccccccc-0000-0000-0000-${hex32().slice(-12)}`;
      const answer = await vonageSigned('/v1/providers/failover/inbound/voice', {
        from: caller.slice(1),
        to: session.proxyNumber.slice(1),
        uuid,
        conversation_uuid: `CON-${uuid}`,
      });
      expect(answer.status).toBe(200);
      const eventUrl = new URL((JSON.parse(answer.text) as Array<{ eventUrl: string[] }>)[0].eventUrl[0]);
      const leg = {
        from: session.proxyNumber.slice(1),
        to: callee.slice(1),
        uuid: `dddddddd-${uuid.slice(9)}`,
        conversation_uuid: `CON-${uuid}`,
      };
      return { uuid, eventUrl, leg, session };
    };
    const c1 = await bridge(onVonage[0]);
    const c2 = await bridge(onVonage[1]);
    const voiceStatus = async (sessionId: string) =>
      (await interactions(sessionId)).filter((i) => (i as { channel?: string }).channel === 'voice').map((i) => i.status);
    const completedC1 = { ...c1.leg, status: 'completed', duration: '42', timestamp: new Date().toISOString() };

    // C1's event, signed by Vonage (the JWT covers the body), sent to C2's call: without C2's tag, or with C1's.
    const forged = [
      `${c1.eventUrl.pathname}?call=${c2.uuid}`,
      `${c1.eventUrl.pathname}?${new URLSearchParams({ ...Object.fromEntries(c1.eventUrl.searchParams), call: c2.uuid })}`,
    ];
    for (const path of forged) {
      const res = await vonageSigned(path, completedC1);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
    }
    expect((await voiceStatus(c2.session.id)).at(-1)).toBe('bridged');

    // The eventUrl the broker gave Vonage settles the call it names.
    expect((await vonageSigned(`${c1.eventUrl.pathname}${c1.eventUrl.search}`, completedC1)).status).toBe(200);
    expect((await voiceStatus(c1.session.id)).at(-1)).toBe('completed');
    expect((await voiceStatus(c2.session.id)).at(-1)).toBe('bridged');
  });

  it("refuses Vonage webhooks that are not signed for us or not Vonage's shape, relaying nothing", async () => {
    const before = messages.requests.length;
    const body = {
      channel: 'sms',
      message_type: 'text',
      message_uuid: 'aaaaaaaa-bbbb-cccc-dddd-0000000000ff',
      from: '2348059999998',
      to: VONAGE_NUMBERS[0].slice(1),
      text: 'hostile',
    };
    const path = '/v1/providers/failover/inbound/sms';
    expect((await vonageSigned(path, body, { token: false })).status).toBe(401);
    expect((await vonageSigned(path, body, { secret: 'another-accounts-secret-0123456789' })).status).toBe(403);
    expect((await vonageSigned(path, body, { applicationId: '11111111-2222-3333-4444-555555555555' })).status).toBe(403);
    expect((await vonageSigned(path, body, { signedBody: JSON.stringify({ ...body, text: 'what was signed' }) })).status).toBe(403);
    const badShape = await vonageSigned(path, { ...body, from: undefined });
    expect(badShape.status).toBe(400);
    expect(badShape.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(JSON.stringify(badShape.body)).toContain('from');
    const unknownNumber = await vonageSigned(path, { ...body, to: '2349029999999' });
    expect(unknownNumber.status).toBe(404);
    expect(unknownNumber.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await vonageSigned(path, 'not json')).status).toBe(400);
    expect(messages.requests).toHaveLength(before);
  });

  it("imports the Vonage account's numbers (all pages), links the new ones to the application, and a second run changes nothing", async () => {
    const importNumbers = () =>
      request(broker.url).post('/v1/admin/providers/failover/numbers/import').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({});
    const linked = (msisdn: string) => ({
      country: 'GB',
      msisdn,
      type: 'mobile-lvn',
      features: ['VOICE', 'SMS'],
      messagesCallbackType: 'app',
      messagesCallbackValue: VONAGE.applicationId,
      voiceCallbackType: 'app',
      voiceCallbackValue: VONAGE.applicationId,
    });
    // Page 1: 100 numbers already linked to our application (count 101); page 2: Prism's example,
    // a number linked to another application.
    const fullPage = {
      kind: 'rewrite' as const,
      body: () =>
        JSON.stringify({ count: 101, numbers: Array.from({ length: 100 }, (_, i) => linked(`4477008${String(i).padStart(5, '0')}`)) }),
    };
    vonageApi.next(fullPage);
    const first = (await importNumbers().expect(200)).body;
    expect(first).toMatchObject({ provider: 'failover', updated: ['+447700900000'], failed: [], changed: true });
    expect(first.added).toHaveLength(101);
    const update = vonageApi.exchanges.find((e) => e.path.startsWith('/number/update'))!;
    expect(Object.fromEntries(new URLSearchParams(update.body))).toEqual({
      country: 'GB',
      msisdn: '447700900000',
      app_id: VONAGE.applicationId,
      voiceStatusCallback: `${PUBLIC_URL}/v1/providers/failover/status`,
    });
    const pages = vonageApi.exchanges
      .filter((e) => e.path.startsWith('/account/numbers'))
      .map((e) => new URL(e.path, 'http://x').searchParams.get('index'));
    expect(pages).toEqual(['1', '2']);

    // Vonage now lists the example number as linked to our application: nothing to add or update.
    vonageApi.next(fullPage, {
      kind: 'rewrite',
      body: (upstream) => JSON.stringify({ count: 101, numbers: [{ ...JSON.parse(upstream).numbers[0], ...linked('447700900000') }] }),
    });
    const second = (await importNumbers().expect(200)).body;
    expect(second).toMatchObject({ added: [], updated: [], failed: [], changed: false });
    expect(second.alreadyThere).toHaveLength(101);
    expect(vonageApi.refusals(prismRefusal)).toEqual([]);
  });
});
