/**
 * The broker carrying traffic through Twilio, end to end over HTTP:
 * PROVIDERS=primary=twilio:<fault proxy → Prism serving Twilio's OpenAPI>,failover=sim:<simulator>.
 * Webhooks are signed with the `twilio` package's own helper over PUBLIC_URL, as Twilio does.
 */
import { XMLParser } from 'fast-xml-parser';
import request from 'supertest';
import twilio from 'twilio';
import { runCli } from '../apps/cli/src/cli';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, createSession, sessionBody } from './support/api-client';
import { startBroker, startSimulator, type BrokerHarness } from './support/broker-harness';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';
import { TWILIO_API_SPEC, prismRefusal, startPrism, type PrismServer } from './support/prism';
import { simCalls } from './support/sim-control';

const SID = 'AC' + 'feedc0de'.repeat(4);
const TOKEN = '0a1b2c3d'.repeat(4);
const PUBLIC_URL = 'https://broker.example.com';
// A valid Nigerian mobile: pool numbers are checked as phone numbers (docs/security.md).
const PROXY = '+2349030000001';
const A = '+2348030001001';
const B = '+2348030001002';
let sids = 0;
const sid = (prefix: 'SM' | 'CA') => `${prefix}${String(++sids).padStart(32, '0')}`;

describe('Twilio end to end (primary on Twilio, failover on the simulator)', () => {
  let prism: PrismServer;
  let proxy: FaultProxy;
  let broker: BrokerHarness;
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' });

  /** Posts a webhook as Twilio does: form-encoded, X-Twilio-Signature over PUBLIC_URL + path. */
  const webhook = (route: string, params: Record<string, string>, signature?: string) => {
    const path = `/v1/providers/primary/${route}`;
    return request(broker.url)
      .post(path)
      .set('content-type', 'application/x-www-form-urlencoded')
      .set('x-twilio-signature', signature ?? twilio.getExpectedTwilioSignature(TOKEN, `${PUBLIC_URL}${path}`, params))
      .send(new URLSearchParams(params).toString());
  };
  const messagesSent = () => proxy.exchanges.filter((e) => e.method === 'POST' && e.path.endsWith('/Messages.json'));
  const interactions = async (sessionId: string) =>
    (await request(broker.url).get(`/v1/sessions/${sessionId}/interactions`).set('authorization', `Bearer ${API_KEY}`).expect(200)).body
      .interactions as Array<{ channel: string; status: string; from: string; to: string }>;
  const health = async () => (await request(broker.url).get('/v1/health/cpaas').expect(200)).body;

  beforeAll(async () => {
    prism = await startPrism(TWILIO_API_SPEC);
    proxy = await startFaultProxy(prism.url);
    const sim = await startSimulator();
    broker = await startBroker(
      {
        ...AUTH_ENV,
        PROVIDERS: `primary=twilio:${proxy.url},failover=sim:${sim.url}`,
        PUBLIC_URL,
        PROVIDER_PRIMARY_ACCOUNT_SID: SID,
        PROVIDER_PRIMARY_AUTH_TOKEN: TOKEN,
        RELAY_RETRY_INTERVAL_MS: '3600000',
        BREAKER_HEALTH_INTERVAL_MS: '3600000',
        BREAKER_CLOSED_CHECK_INTERVAL_MS: '3600000', // health rounds are driven by the test
        SESSION_SWEEP_INTERVAL_MS: '3600000',
        REQUEST_BODY_LIMIT_BYTES: '16384',
        // Every HALF_OPEN create is a probe, and two good ones close the breaker at once.
        BREAKER_HALF_OPEN_PROBE_SHARE: '1',
        BREAKER_CLOSE_MIN_PROBES: '2',
        BREAKER_CLOSE_AFTER_MS: '0',
      },
      { sim },
    );
    await request(broker.url)
      .post('/v1/admin/numbers')
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ provider: 'primary', number: PROXY })
      .expect(201);
  }, 120_000);
  afterAll(async () => {
    await broker?.close();
    await broker?.sim.app.close();
    await proxy?.close();
    await prism?.close();
  });
  afterEach(() => expect(proxy.refusals(prismRefusal)).toEqual([]));

  let session: { id: string; provider: string; proxyNumber: string };

  it('creates a session on primary without a call to Twilio', async () => {
    const before = proxy.exchanges.length;
    // The tests below text and call through it: both channels (a channel is enforced).
    session = (await createSession(broker.url, sessionBody([A, B], { channel: undefined, channels: ['voice', 'sms'] })).expect(201)).body;
    expect(session).toMatchObject({ provider: 'primary', proxyNumber: PROXY, status: 'active' });
    expect(proxy.exchanges.length).toBe(before);
  });

  it('relays a Twilio-signed inbound SMS as one spec-valid Messages.json POST, and a retry of it not again', async () => {
    const messageSid = sid('SM');
    const params = { AccountSid: SID, MessageSid: messageSid, SmsSid: messageSid, From: A, To: PROXY, Body: 'on my way', NumMedia: '0' };
    for (let i = 0; i < 2; i++) {
      const res = await webhook('inbound/sms', params).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/xml/);
      expect(xml.parse(res.text)).toEqual(xml.parse(new twilio.twiml.MessagingResponse().toString()));
    }
    expect(messagesSent().map((e) => Object.fromEntries(new URLSearchParams(e.body)))).toEqual([
      { From: PROXY, To: B, Body: 'on my way', StatusCallback: `${PUBLIC_URL}/v1/providers/primary/status` },
    ]);
    expect(await interactions(session.id)).toEqual([expect.objectContaining({ channel: 'sms', from: A, to: B, status: 'relayed' })]);
  });

  it('answers an inbound call with the Dial TwiML Twilio’s own VoiceResponse makes', async () => {
    const res = await webhook('inbound/voice', { AccountSid: SID, CallSid: sid('CA'), From: B, To: PROXY, CallStatus: 'ringing' }).expect(
      200,
    );
    const expected = new twilio.twiml.VoiceResponse();
    expected.dial({ callerId: PROXY, action: `${PUBLIC_URL}/v1/providers/primary/status`, method: 'POST' }).number(A);
    expect(xml.parse(res.text)).toEqual(xml.parse(expected.toString()));
  });

  it('counts DialCallStatus=failed as a call-setup failure and busy as a success, once each', async () => {
    const outcomes: Record<string, string> = {};
    for (const dialStatus of ['failed', 'busy']) {
      const callSid = sid('CA');
      await webhook('inbound/voice', { AccountSid: SID, CallSid: callSid, From: A, To: PROXY, CallStatus: 'ringing' }).expect(200);
      const action = {
        AccountSid: SID,
        CallSid: callSid,
        DialCallSid: sid('CA'),
        DialCallStatus: dialStatus,
        DialCallDuration: '0',
        From: A,
        To: PROXY,
      };
      for (let i = 0; i < 2; i++) {
        const res = await webhook('status', action).expect(200);
        expect(xml.parse(res.text)).toEqual(xml.parse(new twilio.twiml.VoiceResponse().toString()));
      }
      outcomes[dialStatus] = (await interactions(session.id)).at(-1)!.status;
    }
    expect(outcomes).toEqual({ failed: 'failed', busy: 'busy' });
    const metrics = (await request(broker.url).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(
      /cpaas_provider_calls_total\{provider="primary",operation="call",outcome="call-setup",counts_against_provider="true"\} 1\n/,
    );
    expect(metrics).toMatch(
      /cpaas_provider_calls_total\{provider="primary",operation="call",outcome="success",counts_against_provider="false"\} 1\n/,
    );
  });

  it('refuses a missing signature with 401 and a wrong one with 403, relaying nothing', async () => {
    const before = messagesSent().length;
    const params = { AccountSid: SID, MessageSid: sid('SM'), From: A, To: PROXY, Body: 'forged' };
    const unsigned = await request(broker.url)
      .post('/v1/providers/primary/inbound/sms')
      .set('content-type', 'application/x-www-form-urlencoded')
      .send(new URLSearchParams(params).toString());
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers['content-type']).toMatch(/^application\/problem\+json/);
    await webhook(
      'inbound/sms',
      params,
      twilio.getExpectedTwilioSignature('ff'.repeat(16), `${PUBLIC_URL}/v1/providers/primary/inbound/sms`, params),
    ).expect(403);
    // Signed for the broker's own address instead of PUBLIC_URL: not what Twilio would sign.
    await webhook(
      'inbound/sms',
      params,
      twilio.getExpectedTwilioSignature(TOKEN, `${broker.url}/v1/providers/primary/inbound/sms`, params),
    ).expect(403);
    expect(messagesSent().length).toBe(before);
  });

  it.each([
    ['a body without From', { AccountSid: SID, MessageSid: 'SM' + '9'.repeat(32), To: PROXY, Body: 'x' }, 400],
    ['a To that is no pool number', { AccountSid: SID, MessageSid: 'SM' + '8'.repeat(32), From: A, To: '+15005550999', Body: 'x' }, 404],
    ['an oversized body', { AccountSid: SID, MessageSid: 'SM' + '7'.repeat(32), From: A, To: PROXY, Body: 'x'.repeat(20_000) }, 413],
  ])('answers %s with a 4xx problem and relays nothing', async (_name, params, status) => {
    const before = messagesSent().length;
    const res = await webhook('inbound/sms', params);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(messagesSent().length).toBe(before);
  });

  describe('number import', () => {
    beforeEach(() => {
      proxy.exchanges.length = 0;
    });
    const importNumbers = () =>
      request(broker.url).post('/v1/admin/providers/primary/numbers/import').set('authorization', `Bearer ${ADMIN_TOKEN}`).send({});
    const routes = {
      sms_url: `${PUBLIC_URL}/v1/providers/primary/inbound/sms`,
      voice_url: `${PUBLIC_URL}/v1/providers/primary/inbound/voice`,
      status_callback: `${PUBLIC_URL}/v1/providers/primary/status`,
    };

    it('adds the account’s numbers (all pages) and points their webhooks at PUBLIC_URL with spec-valid requests', async () => {
      const firstPage = `/2010-04-01/Accounts/${SID}/IncomingPhoneNumbers.json?PageSize=1000`;
      // Two pages: Prism serves one example page, the proxy makes the first point at a second and
      // gives the number on it the pool's proxy number, already pointed at the broker.
      proxy.next({
        kind: 'rewrite',
        body: (body) =>
          JSON.stringify({
            ...JSON.parse(body),
            next_page_uri: `${firstPage}&Page=1&PageToken=PA1`,
            incoming_phone_numbers: [
              { ...JSON.parse(body).incoming_phone_numbers[0], sid: 'PN' + '1'.repeat(32), phone_number: PROXY, ...routes },
            ],
          }),
      });
      const first = (await importNumbers().expect(200)).body;
      expect(first).toEqual({
        provider: 'primary',
        added: ['+18089255327'],
        alreadyThere: [PROXY],
        updated: ['+18089255327'],
        failed: [],
        changed: true,
      });
      const update = proxy.exchanges.find((e) => e.method === 'POST' && e.path.includes('/IncomingPhoneNumbers/'))!;
      expect(Object.fromEntries(new URLSearchParams(update.body))).toMatchObject({
        SmsUrl: routes.sms_url,
        VoiceUrl: routes.voice_url,
        StatusCallback: routes.status_callback,
      });
      const pool = (
        await request(broker.url).get('/v1/admin/numbers?provider=primary').set('authorization', `Bearer ${ADMIN_TOKEN}`).expect(200)
      ).body;
      expect(pool.numbers.map((n: { number: string }) => n.number).sort()).toEqual([PROXY, '+18089255327'].sort());
    });

    it('changes nothing on a second run and says so (Twilio now holds the broker’s URLs)', async () => {
      proxy.always({
        kind: 'rewrite',
        body: (body) =>
          body
            .replace(/"sms_url":"[^"]*"/, `"sms_url":"${routes.sms_url}"`)
            .replace(/"voice_url":null/, `"voice_url":"${routes.voice_url}"`)
            .replace(/"status_callback":"[^"]*"/, `"status_callback":"${routes.status_callback}"`),
      });
      const out: string[] = [];
      const code = await runCli(
        ['numbers', 'import', '--provider', 'primary'],
        { url: broker.url, adminToken: ADMIN_TOKEN },
        { stdout: (t) => out.push(t), stderr: (t) => out.push(t) },
      );
      proxy.always({ kind: 'pass' });
      expect(code).toBe(0);
      expect(out.join('\n')).toBe(
        ['primary: nothing to change', 'added          none', 'already there  +18089255327', 'updated        none'].join('\n'),
      );
      expect(proxy.exchanges.filter((e) => e.method === 'POST')).toEqual([]);
    });

    it('refuses an import on the simulator, which cannot list its numbers', async () => {
      const res = await request(broker.url)
        .post('/v1/admin/providers/failover/numbers/import')
        .set('authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({});
      expect(res.status).toBe(422);
      expect(res.body.detail).toContain('POST /v1/admin/numbers');
    });
  });

  it('opens primary’s breaker after 5 counted faults, shows it without a secret, and sends new sessions to the failover', async () => {
    proxy.always({ kind: 'answer', status: 503, body: '{"code":20500,"message":"Internal Server Error","status":503}' });
    for (let i = 0; i < 5; i++) {
      const messageSid = sid('SM');
      await webhook('inbound/sms', { AccountSid: SID, MessageSid: messageSid, From: A, To: PROXY, Body: `try ${i}` }).expect(200);
    }
    proxy.always({ kind: 'pass' });
    const primary = (await health()).providers.find((p: { name: string }) => p.name === 'primary');
    expect(primary).toMatchObject({ state: 'OPEN', openedAt: expect.any(String), lastError: expect.stringContaining('503') });
    const shown = JSON.stringify(await health());
    expect(shown).not.toContain(TOKEN);
    expect(shown).not.toContain(Buffer.from(`${SID}:${TOKEN}`).toString('base64'));

    const [c, d] = ['+2348030001003', '+2348030001004'];
    const next = (await createSession(broker.url, sessionBody([c, d])).expect(201)).body;
    expect(next.provider).toBe('failover');
    expect(await simCalls(broker.sim.url, 'failover', 'bind')).toEqual([expect.objectContaining({ type: 'bind' })]);
  });

  it('closes primary’s breaker from HALF_OPEN on the texts its sessions carry, not on account reads or creates', async () => {
    const prober = broker.app.get(HealthProber);
    const primary = async () => (await health()).providers.find((p: { name: string }) => p.name === 'primary');
    for (let i = 0; i < 5 && (await primary()).state === 'OPEN'; i++) await prober.tick();
    expect((await primary()).state).toBe('HALF_OPEN');
    const reads = () => proxy.exchanges.filter((e) => e.method === 'GET' && e.path === `/2010-04-01/Accounts/${SID}.json`).length;
    const readsBefore = reads();
    const pairs: Array<[string, string]> = [
      ['+2348030001005', '+2348030001006'],
      ['+2348030001007', '+2348030001008'],
    ];
    const probes = [];
    for (const pair of pairs) {
      const created = (await createSession(broker.url, sessionBody(pair)).expect(201)).body;
      expect(created.provider).toBe('primary');
      probes.push({ ...created, pair });
    }
    // A create on Twilio proves nothing about it, and a passing account read counts towards no close.
    await prober.tick();
    expect(reads() - readsBefore).toBe(1);
    expect(await primary()).toMatchObject({ state: 'HALF_OPEN', trafficProbes: 0 });
    // The probe sessions' texts are the probes: the 2nd relayed one closes it (BREAKER_CLOSE_MIN_PROBES=2).
    for (const [i, probe] of probes.entries()) {
      const messageSid = sid('SM');
      await webhook('inbound/sms', {
        AccountSid: SID,
        MessageSid: messageSid,
        From: probe.pair[0],
        To: probe.proxyNumber,
        Body: `probe ${i}`,
      }).expect(200);
      expect(await primary()).toMatchObject(i === 0 ? { state: 'HALF_OPEN', trafficProbes: 1 } : { state: 'CLOSED' });
    }
  });
});
