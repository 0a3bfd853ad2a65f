/**
 * The provider breaker on a real vendor adapter that keeps no sessions (docs/design.md#provider-breaker: real
 * traffic is the probe; issue #27): primary and failover on Twilio (two accounts), each adapter talking to
 * Twilio's published OpenAPI description served by Prism, behind its own fault proxy. A create on Twilio makes no vendor call,
 * so the breaker learns from what the provider carries (texts, bridged calls) and from health checks:
 *
 * - Messages failing while the account API answers: texts keep arriving on the primary's sessions, and the
 *   primary never closes (health checks alone never close a breaker); once Messages recover, its sessions'
 *   texts close it after the gate.
 * - Every outcome path: a session pinned on an OPEN primary still sends through it and moves nothing; in
 *   HALF_OPEN its texts and bridged calls are probes (a failed bridge re-opens, a success counts).
 * - The vendor gone fully dark (every request refused or hanging) with no traffic and no webhook: the
 *   leader's CLOSED-state checks open it within six intervals, and new sessions land on the failover.
 *
 * Health checks are triggered by the test (HealthProber.tick) and the close gate crossed by moving the
 * breakers' time, except in the dark case, where the checks run on their own, shortened interval; there
 * the assertions are on counts of requests, never on durations.
 */
import request from 'supertest';
import twilio from 'twilio';
import { BreakerStateStore } from '../apps/broker/src/providers/breaker-state.store';
import { HealthProber } from '../apps/broker/src/providers/health-prober';
import { ADMIN_TOKEN, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { advanceBreakerTime } from './support/breaker-time';
import { startBroker } from './support/broker-harness';
import { startFaultProxy, type Fault } from './support/fault-proxy';
import { eventually } from './support/processes';
import { TWILIO_API_SPEC, prismRefusal, startPrism, type PrismServer } from './support/prism';

const PUBLIC_URL = 'https://broker.example.com';
const ACCOUNTS = {
  primary: { sid: 'AC' + 'a1'.repeat(16), token: '1a'.repeat(16), number: '+2349030000001' },
  failover: { sid: 'AC' + 'b2'.repeat(16), token: '2b'.repeat(16), number: '+2349030000002' },
};
const CLOSE_AFTER_MS = 600_000;
const MESSAGES_DOWN: Fault = { kind: 'answer', status: 503, body: '{"code":20500,"message":"Internal Server Error","status":503}' };
const isMessages = (r: { method: string; path: string }) => r.method === 'POST' && r.path.endsWith('/Messages.json');
const isAccountRead = (sid: string) => (r: { method: string; path: string }) =>
  r.method === 'GET' && r.path === `/2010-04-01/Accounts/${sid}.json`;

let sids = 0;
const sid = (prefix: 'SM' | 'CA') => `${prefix}${String(++sids).padStart(32, '0')}`;

interface ProviderView {
  name: string;
  state: 'CLOSED' | 'OPEN' | 'HALF_OPEN';
  openedAt: string | null;
  consecutiveFailures: number;
  healthPasses: number;
  probes: number;
  trafficProbes: number;
}

interface Session {
  id: string;
  provider: string;
  proxyNumber: string;
  pair: [string, string];
}

/** A broker with primary and failover on Twilio, each behind its own fault proxy in front of one Prism. */
async function twilioBroker(prism: PrismServer, env: Record<string, string>) {
  const proxies = { primary: await startFaultProxy(prism.url), failover: await startFaultProxy(prism.url) };
  const broker = await startBroker({
    ...AUTH_ENV,
    PROVIDERS: `primary=twilio:${proxies.primary.url},failover=twilio:${proxies.failover.url}`,
    PUBLIC_URL,
    PROVIDER_PRIMARY_ACCOUNT_SID: ACCOUNTS.primary.sid,
    PROVIDER_PRIMARY_AUTH_TOKEN: ACCOUNTS.primary.token,
    PROVIDER_FAILOVER_ACCOUNT_SID: ACCOUNTS.failover.sid,
    PROVIDER_FAILOVER_AUTH_TOKEN: ACCOUNTS.failover.token,
    RELAY_RETRY_INTERVAL_MS: '3600000',
    SESSION_SWEEP_INTERVAL_MS: '3600000',
    ...env,
  });
  for (const name of ['primary', 'failover'] as const)
    await request(broker.url)
      .post('/v1/admin/numbers')
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ provider: name, number: ACCOUNTS[name].number, capabilities: ['sms', 'voice'] })
      .expect(201);
  const view = async (name: 'primary' | 'failover'): Promise<ProviderView> =>
    (await request(broker.url).get('/v1/health/cpaas').expect(200)).body.providers.find((p: ProviderView) => p.name === name);
  const create = async (): Promise<Session> => {
    const participants = freshPair();
    // Both channels: the sessions carry the texts and the bridged calls the breaker learns from.
    const res = await createSession(broker.url, sessionBody(participants, { channel: undefined, channels: ['voice', 'sms'] })).expect(201);
    return { ...(res.body as Omit<Session, 'pair'>), pair: participants };
  };
  /** Posts a webhook to the primary's routes as Twilio does: form-encoded, signed over PUBLIC_URL + path. */
  const webhook = (route: string, params: Record<string, string>) => {
    const path = `/v1/providers/primary/${route}`;
    return request(broker.url)
      .post(path)
      .set('content-type', 'application/x-www-form-urlencoded')
      .set('x-twilio-signature', twilio.getExpectedTwilioSignature(ACCOUNTS.primary.token, `${PUBLIC_URL}${path}`, params))
      .send(new URLSearchParams(params).toString());
  };
  const text = (session: Session, body: string) =>
    webhook('inbound/sms', {
      AccountSid: ACCOUNTS.primary.sid,
      MessageSid: sid('SM'),
      From: session.pair[0],
      To: session.proxyNumber,
      Body: body,
    }).expect(200);
  /** An inbound call on the session, bridged, and Twilio's <Dial action> callback with `dialStatus`. */
  const call = async (session: Session, dialStatus: 'completed' | 'failed') => {
    const callSid = sid('CA');
    const base = { AccountSid: ACCOUNTS.primary.sid, CallSid: callSid, From: session.pair[0], To: session.proxyNumber };
    await webhook('inbound/voice', { ...base, CallStatus: 'ringing' }).expect(200);
    await webhook('status', { ...base, DialCallSid: sid('CA'), DialCallStatus: dialStatus, DialCallDuration: '12' }).expect(200);
  };
  const history = async (): Promise<string[]> => {
    await broker.app.get(BreakerStateStore).flush(); // the transitions are persisted in the background
    return (
      (await request(broker.url).get('/v1/health/cpaas/history?provider=primary&limit=500').expect(200)).body.transitions as Array<{
        from: string;
        to: string;
      }>
    )
      .map((t) => `${t.from}>${t.to}`)
      .reverse();
  };
  const close = async () => {
    await broker.close();
    await proxies.primary.close();
    await proxies.failover.close();
  };
  return { broker, proxies, view, create, text, call, history, close };
}

describe('the breaker on Twilio, a vendor without sessions: real traffic is the probe', () => {
  let prism: PrismServer;

  beforeAll(async () => {
    prism = await startPrism(TWILIO_API_SPEC);
  }, 120_000);
  afterAll(async () => {
    await prism?.close();
  });

  describe('Messages failing while the account API answers', () => {
    let t: Awaited<ReturnType<typeof twilioBroker>>;
    const prober = () => t.broker.app.get(HealthProber);
    const ticks = async (n: number) => {
      for (let i = 0; i < n; i++) await prober().tick();
    };
    /** Creates until one lands on the primary (a HALF_OPEN probe session, every 2nd create). */
    const probeSession = async (): Promise<Session> => {
      for (let i = 0; i < 4; i++) {
        const made = await t.create();
        if (made.provider === 'primary') return made;
      }
      throw new Error('no create landed on the primary');
    };
    let old: Session;

    beforeAll(async () => {
      t = await twilioBroker(prism, {
        BREAKER_HEALTH_INTERVAL_MS: '3600000', // health rounds are driven by the test
        BREAKER_CLOSED_CHECK_INTERVAL_MS: '3600000',
        BREAKER_HALF_OPEN_PROBE_SHARE: '0.5',
        BREAKER_CLOSE_MIN_PROBES: '3',
        BREAKER_CLOSE_AFTER_MS: String(CLOSE_AFTER_MS), // crossed by moving the breakers' time
      });
    });
    afterAll(() => t?.close());
    afterEach(() => {
      expect(t.proxies.primary.refusals(prismRefusal)).toEqual([]);
      expect(t.proxies.failover.refusals(prismRefusal)).toEqual([]);
    });

    it('never closes the primary while its texts fail, however often its account read passes', async () => {
      old = await t.create();
      expect(old.provider).toBe('primary');
      const messagesUp = t.proxies.primary.when(isMessages, MESSAGES_DOWN);
      try {
        // Three rounds of what an operator would see on a bad day: texts fail, the account read passes.
        for (let round = 0; round < 3; round++) {
          for (let i = 0; i < 5 && (await t.view('primary')).state !== 'OPEN'; i++) await t.text(old, `round ${round} text ${i}`);
          expect((await t.view('primary')).state).toBe('OPEN');
          await ticks(5);
          expect((await t.view('primary')).state).toBe('HALF_OPEN');
          // Probe sessions (no Twilio call), checks passing, and the close gate's whole duration.
          const probe = await probeSession();
          await ticks(3);
          advanceBreakerTime(t.broker, CLOSE_AFTER_MS);
          await ticks(1);
          expect(await t.view('primary')).toMatchObject({ state: 'HALF_OPEN', trafficProbes: 0 });
          // The probe session's first text is real traffic on the primary: it fails, and the breaker re-opens.
          await t.text(probe, `round ${round} probe`);
          expect((await t.view('primary')).state).toBe('OPEN');
        }
        expect(await t.history()).not.toContain('HALF_OPEN>CLOSED');
        // New sessions meanwhile went to the failover, whose Messages answered.
        expect((await t.create()).provider).toBe('failover');
      } finally {
        messagesUp();
      }
    });

    it('sends through the OPEN primary for a session pinned there, and none of it moves the breaker', async () => {
      const before = await t.view('primary');
      expect(before.state).toBe('OPEN');
      const sent = () => t.proxies.primary.exchanges.filter(isMessages).length;
      const removeFault = t.proxies.primary.when(isMessages, MESSAGES_DOWN);
      const failedBefore = sent();
      await t.text(old, 'while OPEN, failing');
      removeFault();
      await t.text(old, 'while OPEN, delivered');
      expect(sent()).toBe(failedBefore + 2);
      expect(await t.view('primary')).toMatchObject({ state: 'OPEN', openedAt: before.openedAt, healthPasses: before.healthPasses });
    });

    it('takes the HALF_OPEN primary’s texts and bridged calls as probes: a failed bridge re-opens it', async () => {
      await ticks(5);
      expect((await t.view('primary')).state).toBe('HALF_OPEN');
      const probe = await probeSession();
      await t.text(probe, 'probe text');
      await t.call(probe, 'completed');
      expect(await t.view('primary')).toMatchObject({ state: 'HALF_OPEN', trafficProbes: 2 });
      await t.call(probe, 'failed'); // Twilio could not set up the bridge
      expect((await t.view('primary')).state).toBe('OPEN');
    });

    it('closes after the gate once Messages recover: its sessions’ texts are the probes the gate counts', async () => {
      await ticks(5);
      expect((await t.view('primary')).state).toBe('HALF_OPEN');
      for (let i = 0; i < 3; i++) await t.text(old, `recovered ${i}`);
      // 3 real-traffic probes, the gate's minimum, but not yet its duration.
      expect(await t.view('primary')).toMatchObject({ state: 'HALF_OPEN', trafficProbes: 3 });
      advanceBreakerTime(t.broker, CLOSE_AFTER_MS);
      await t.text(old, 'after the gate');
      expect((await t.view('primary')).state).toBe('CLOSED');
      expect((await t.create()).provider).toBe('primary');
      expect((await t.history()).slice(-2)).toEqual(['OPEN>HALF_OPEN', 'HALF_OPEN>CLOSED']);
    });
  });

  describe.each([
    ['refused (every connection reset)', { kind: 'reset' } as Fault],
    ['hanging (no answer)', { kind: 'hang' } as Fault],
  ])('the primary fully dark: %s, no traffic, no webhook', (_what, fault) => {
    let t: Awaited<ReturnType<typeof twilioBroker>>;

    beforeAll(async () => {
      t = await twilioBroker(prism, {
        BREAKER_HEALTH_INTERVAL_MS: '300',
        BREAKER_CLOSED_CHECK_INTERVAL_MS: '300',
        PROVIDER_CALL_TIMEOUT_MS: '150',
      });
    });
    afterAll(() => t?.close());

    it('is OPEN after 5 failed CLOSED-state checks (within six intervals), no create having called it, and new sessions go to the failover', async () => {
      const from = t.proxies.primary.exchanges.length;
      t.proxies.primary.always(fault);
      const pinned = await t.create(); // CLOSED and dark: a create makes no call, and lands on the primary
      expect(pinned.provider).toBe('primary');
      await eventually(async () => (await t.view('primary')).state === 'OPEN', 300, 50);
      const openedAt = Date.parse((await t.view('primary')).openedAt!);
      const before = t.proxies.primary.exchanges.slice(from).filter((e) => e.at <= openedAt);
      // Only the leader's account reads reached the dead vendor; the 5th failed one in a row opened the breaker.
      expect(before.every(isAccountRead(ACCOUNTS.primary.sid))).toBe(true);
      expect(before.length).toBe(5);
      expect(await t.view('primary')).toMatchObject({ state: 'OPEN' });
      expect((await t.create()).provider).toBe('failover');
      expect(t.proxies.failover.exchanges.filter((e) => !isAccountRead(ACCOUNTS.failover.sid)(e))).toEqual([]);
    });
  });
});
