/**
 * The series an on-call reads (issue #31), each shown to move when its cause happens: HTTP requests by
 * route pattern, active sessions, the pool, the webhook and relay backlogs, given-up deliveries by the last
 * answer, creates routed away by an OPEN breaker, the breaker leader, the database. The cluster gauges are
 * read from the database on a schedule; the tests ask for a read (`ClusterGauges.refresh`) instead of
 * waiting for one. Last, the label sets are shown bounded: more sessions, participants and ids add no series.
 */
import { jest } from '@jest/globals';
import type { Clock } from '@app/clock';
import { WebhookReceiver, createTestDatabase, type TestDatabase } from '@app/testing';
import request from 'supertest';
import { CLOCK } from '../apps/broker/src/common/clock';
import { ClusterGauges } from '../apps/broker/src/metrics/cluster-gauges';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault, simInbound } from './support/sim-control';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';

jest.setTimeout(120_000);

type Series = Map<string, number>;

async function scrape(url: string): Promise<Series> {
  const res = await request(url).get('/metrics').expect(200);
  const series: Series = new Map();
  for (const line of res.text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

const value = (series: Series, key: string) => series.get(key) ?? Number.NaN;

describe('/metrics: what an on-call needs', () => {
  let broker: BrokerHarness;
  let clock: Clock;
  let wallNow: Clock['now'];
  let receiver: WebhookReceiver;

  const refreshed = async () => {
    await broker.app.get(ClusterGauges).refresh();
    return scrape(broker.url);
  };
  const auth = { authorization: `Bearer ${API_KEY}` };

  beforeAll(async () => {
    broker = await startBroker({
      ...AUTH_ENV,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      RELAY_RETRY_INTERVAL_MS: '100',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
      // Read on request only: a scheduled read between two scrapes would make the steps race.
      METRICS_REFRESH_MS: '3600000',
    });
    clock = broker.app.get<Clock>(CLOCK);
    wallNow = clock.now;
    receiver = await WebhookReceiver.start();
  });
  afterEach(() => {
    clock.now = wallNow;
  });
  afterAll(async () => {
    await receiver?.close();
    await broker?.close();
  });

  it('counts requests by route pattern, method and status, with their latency; a 404 of no route is "unmatched"', async () => {
    const session = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body as { id: string };
    const before = await scrape(broker.url);
    await request(broker.url).get(`/v1/sessions/${session.id}`).set(auth).expect(200);
    await request(broker.url).get(`/v1/sessions/${session.id}`).set(auth).expect(200);
    await request(broker.url).get('/v1/sessions/00000000-0000-4000-8000-000000000000').set(auth).expect(404);
    await request(broker.url).get(`/no/such/${session.id}`).expect(404);
    const after = await scrape(broker.url);
    const moved = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);

    expect(moved('broker_http_requests_total{route="/v1/sessions/:id",method="GET",status="200"}')).toBe(2);
    expect(moved('broker_http_requests_total{route="/v1/sessions/:id",method="GET",status="404"}')).toBe(1);
    expect(moved('broker_http_requests_total{route="unmatched",method="GET",status="404"}')).toBe(1);
    expect(moved('broker_http_request_duration_seconds_count{route="/v1/sessions/:id",method="GET"}')).toBe(3);
    expect(after.get('broker_http_requests_total{route="/v1/sessions",method="POST",status="201"}')).toBeGreaterThanOrEqual(1);
    // The id is in no label.
    expect([...after.keys()].some((key) => key.includes(session.id))).toBe(false);
  });

  it('reads the active sessions by provider and channel, and the pool by provider', async () => {
    const before = await refreshed();
    expect(value(before, 'broker_pool_numbers{provider="primary",state="enabled"}')).toBe(10);
    expect(value(before, 'broker_pool_numbers{provider="primary",state="disabled"}')).toBe(0);

    // One participant in two sessions: two numbers taken for them, the most anyone holds.
    const [busy, other] = freshPair();
    const first = (await createSession(broker.url, sessionBody([busy, other])).expect(201)).body as { id: string; provider: string };
    await createSession(broker.url, sessionBody([busy, freshPair()[0]], { channel: 'voice' })).expect(201);
    expect(first.provider).toBe('primary');
    let after = await refreshed();
    const moved = (key: string) => value(after, key) - value(before, key);
    expect(moved('broker_sessions_active{provider="primary",channel="sms"}')).toBe(1);
    expect(moved('broker_sessions_active{provider="primary",channel="voice"}')).toBe(1);
    expect(value(after, 'broker_sessions_active{provider="failover",channel="sms"}')).toBe(0);
    const active = [...after.entries()].filter(([key]) => key.startsWith('broker_sessions_active{provider="primary"'));
    const carrying = active.reduce((sum, [, n]) => sum + n, 0);
    // Sessions are spread least-loaded first: each new one took an idle number while there was one.
    expect(value(after, 'broker_pool_numbers_idle{provider="primary"}')).toBe(10 - carrying);
    expect(value(after, 'broker_pool_headroom_numbers{provider="primary"}')).toBe(10 - 2);
    expect(value(after, 'broker_pool_headroom_numbers{provider="failover"}')).toBe(10);

    // A number added, then disabled: the pool moves with it.
    const added = await request(broker.url)
      .post('/v1/admin/numbers')
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ provider: 'failover', number: '+2349020000999' })
      .expect(201);
    after = await refreshed();
    expect(value(after, 'broker_pool_numbers{provider="failover",state="enabled"}')).toBe(11);
    await request(broker.url)
      .delete(`/v1/admin/numbers/${(added.body as { id: string }).id}`)
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .expect(200);
    after = await refreshed();
    expect(value(after, 'broker_pool_numbers{provider="failover",state="enabled"}')).toBe(10);
    expect(value(after, 'broker_pool_numbers{provider="failover",state="disabled"}')).toBe(1);

    // Closed: one fewer active session.
    await request(broker.url).delete(`/v1/sessions/${first.id}`).set(auth).expect(200);
    const closed = await refreshed();
    expect(value(closed, 'broker_sessions_active{provider="primary",channel="sms"}')).toBe(
      value(after, 'broker_sessions_active{provider="primary",channel="sms"}') - 1,
    );
    expect(value(closed, 'broker_database_up')).toBe(1);
  });

  it('shows a webhook in flight, the pending backlog and its age, and a given-up delivery by its last answer', async () => {
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    receiver.answer = async () => {
      await held;
      return { status: 503 };
    };
    const before = await refreshed();
    await createSession(broker.url, sessionBody(freshPair(), { callbackUrl: receiver.url })).expect(201);
    await receiver.waitFor(1);
    const during = await refreshed();
    expect(value(during, 'broker_webhook_deliveries_in_flight')).toBe(1);
    expect(value(during, 'broker_webhook_deliveries_pending{kind="account"}')).toBe(
      value(before, 'broker_webhook_deliveries_pending{kind="account"}') + 1,
    );
    release();
    await eventually(async () => value(await scrape(broker.url), 'broker_webhook_deliveries_in_flight') === 0);

    // An hour later on the app's clock, the delivery is still pending, an hour old.
    const now = clock.now();
    clock.now = () => now + 3_600_000;
    const later = await refreshed();
    expect(value(later, 'broker_webhook_deliveries_oldest_pending_age_seconds{kind="account"}')).toBeGreaterThanOrEqual(3600);

    // Past its 72 h, the worker gives it up: counted by what the endpoint last answered.
    const givenUp = 'broker_webhook_deliveries_given_up_total{kind="account",reason="http-5xx"}';
    expect(value(before, givenUp)).toBe(0);
    clock.now = () => now + 73 * 3_600_000;
    await eventually(async () => value(await refreshed(), 'broker_webhook_deliveries_pending{kind="account"}') === 0);
    const after = await refreshed();
    expect(value(after, givenUp)).toBe(1);
    expect(value(after, 'broker_webhook_deliveries_given_up_total{kind="account",reason="no-response"}')).toBe(0);
    expect(value(after, 'broker_webhook_deliveries_oldest_pending_age_seconds{kind="account"}')).toBe(0);
  });

  it('counts a relay the provider has not taken yet, until it does', async () => {
    const session = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body as {
      provider: string;
      proxyNumber: string;
      participants: Array<{ number: string }>;
    };
    expect(value(await refreshed(), 'broker_relays_pending')).toBe(0);
    await setFault(broker.sim.url, session.provider, { mode: 'error' });
    try {
      await simInbound(broker.sim.url, session.provider, {
        channel: 'sms',
        from: session.participants[0].number,
        to: session.proxyNumber,
        text: 'at the gate',
      });
      const pending = await refreshed();
      expect(value(pending, 'broker_relays_pending')).toBe(1);
      expect(value(pending, 'broker_relays_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(0);
    } finally {
      await setFault(broker.sim.url, session.provider, { mode: 'ok' });
    }
    await eventually(async () => value(await refreshed(), 'broker_relays_pending') === 0);
  });

  it('counts creates routed away from a provider by its breaker, which failed_over never saw', async () => {
    const routedAway = 'broker_sessions_routed_away_total{provider="primary",state="OPEN"}';
    const failedOver = 'broker_sessions_created_total{provider="failover",failed_over="true"}';
    const before = await scrape(broker.url);
    await setFault(broker.sim.url, 'primary', { mode: 'down' });
    try {
      // Until its breaker opens (the 5th failure in a row at most), a create tries the primary, fails and
      // fails over; from then on it does not try the primary at all: routed away, not "failed over".
      for (let i = 0; i < 6; i++)
        expect((await createSession(broker.url, sessionBody(freshPair())).expect(201)).body.provider).toBe('failover');
      const after = await scrape(broker.url);
      const moved = (key: string) => value(after, key) - (before.get(key) ?? 0);
      expect(moved(routedAway)).toBeGreaterThanOrEqual(1);
      expect(moved(routedAway) + moved(failedOver)).toBe(6);
      expect(value(after, 'cpaas_breaker_state{provider="primary"}')).toBe(2);
      expect(value(after, 'broker_sessions_routed_away_total{provider="failover",state="OPEN"}')).toBe(0);
    } finally {
      await setFault(broker.sim.url, 'primary', { mode: 'ok' });
    }
  });

  it('keeps every label set bounded: more sessions, participants and ids add no series', async () => {
    // The same kinds of request with new sessions, numbers and ids: first to see every route once, then again.
    const round = async () => {
      const session = (await createSession(broker.url, sessionBody(freshPair())).expect(201)).body as { id: string };
      await request(broker.url).get(`/v1/sessions/${session.id}`).set(auth).expect(200);
      await request(broker.url).get(`/v1/sessions/${session.id}/interactions`).set(auth).expect(200);
      await request(broker.url).get(`/nowhere/${session.id}`).expect(404);
      await request(broker.url).delete(`/v1/sessions/${session.id}`).set(auth).expect(200);
    };
    await round();
    const first = new Set((await refreshed()).keys());
    for (let i = 0; i < 5; i++) await round();
    const again = new Set((await refreshed()).keys());
    expect([...again].filter((key) => !first.has(key))).toEqual([]);
    // No label value is a phone number or an id.
    const values = [...again].flatMap((key) => [...key.matchAll(/="([^"]*)"/g)].map((m) => m[1]));
    expect(values.filter((v) => /^\+?\d{7,15}$/.test(v) || /[0-9a-f]{8}-[0-9a-f]{4}-/.test(v))).toEqual([]);
  });
});

describe('/metrics: the breaker leader and the database', () => {
  let db: TestDatabase;
  let broker: BrokerHarness;
  let proxy: TcpProxy;

  beforeAll(async () => {
    db = await createTestDatabase();
    // The broker reaches its database through a proxy the test can cut.
    const target = new URL(db.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    broker = await startBroker(
      { ...AUTH_ENV, METRICS_REFRESH_MS: '3600000', DATABASE_URL: viaProxy.toString(), BREAKER_HEALTH_INTERVAL_MS: '1000' },
      { db },
    );
  });
  afterAll(async () => {
    await broker?.close();
    await proxy?.close();
    await db?.drop();
  });

  it('says which replica leads, that a leader is known, and that the database answers; and when it does not', async () => {
    await eventually(async () => value(await scrape(broker.url), 'broker_breaker_is_leader') === 1);
    const gauges = broker.app.get(ClusterGauges);
    await gauges.refresh();
    let series = await scrape(broker.url);
    expect(value(series, 'broker_breaker_leader_known')).toBe(1);
    expect(value(series, 'broker_database_up')).toBe(1);

    proxy.cut();
    await gauges.refresh();
    expect(value(await scrape(broker.url), 'broker_database_up')).toBe(0);
    // Within half a lease the replica stops leading and, cut off, knows no leader.
    await eventually(async () => {
      series = await scrape(broker.url);
      return value(series, 'broker_breaker_leader_known') === 0;
    });
    expect(value(series, 'broker_breaker_is_leader')).toBe(0);

    proxy.restore();
    await eventually(async () => {
      await gauges.refresh();
      series = await scrape(broker.url);
      return value(series, 'broker_database_up') === 1 && value(series, 'broker_breaker_leader_known') === 1;
    });
  });
});
