/**
 * An operator forces a breaker (issue #31 item 4, docs/operations.md#forcing-a-breaker): three replicas on one
 * database and one simulator. A force asked of any replica is applied by the breaker leader and seen by all three;
 * the history says who and why, the ops webhook and /metrics too; a forced state follows the rules from there (a
 * forced CLOSED trips again at the 5th failure); bad requests are 4xx problems that change nothing; with no leader
 * to take it, the request is withdrawn (503) and nothing changes. Every wait is bounded and polls; nothing here
 * asserts a duration.
 */
import { jest } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { verifyWebhook } from '@app/sdk';
import { WebhookReceiver } from '@app/testing';
import { BreakerLeadership } from '../apps/broker/src/providers/cluster/breaker-leadership';
import { ADMIN_TOKEN, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, startSimulator, type BrokerHarness, type SimulatorHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault } from './support/sim-control';

jest.setTimeout(120_000);

const OPS_SECRET = 'ops-secret-override-0123456789';
const STATE_MESSAGE = "state must be OPEN or CLOSED (HALF_OPEN is reached by the breaker's own rules only)";

interface ProviderView {
  name: string;
  state: 'CLOSED' | 'OPEN' | 'HALF_OPEN';
  reason: string;
  forcedBy: string | null;
  consecutiveFailures: number;
  windowCalls: number;
  healthPasses: number;
  lastError: string | null;
}

interface TransitionView {
  id: string;
  provider: string;
  from: string;
  to: string;
  reason: string;
  forcedBy: string | null;
}

describe('forcing a breaker, three replicas', () => {
  let sim: SimulatorHarness;
  let receiver: WebhookReceiver;
  let replicas: BrokerHarness[] = [];
  let db: DataSource;

  const env = {
    ...AUTH_ENV,
    // No scheduled health check moves a state under the test; the lease (one health interval) never runs out.
    BREAKER_HEALTH_INTERVAL_MS: '3600000',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
  };

  beforeAll(async () => {
    sim = await startSimulator();
    receiver = await WebhookReceiver.start();
    // One configuration for the cluster, as in production.
    const cluster = { ...env, OPS_WEBHOOK_URL: `${receiver.url}/ops`, OPS_WEBHOOK_SECRET: OPS_SECRET };
    const first = await startBroker(cluster, { sim });
    replicas = [first];
    // One after the other: the first leads from the start.
    for (let i = 0; i < 2; i++) replicas.push(await startBroker(cluster, { sim, db: first.db }));
    db = first.app.get(DataSource);
  });
  afterAll(async () => {
    for (const replica of replicas.slice(1).reverse()) await replica.app.close();
    await replicas[0]?.close();
    await receiver?.close();
    await sim?.app.close();
  });

  const leader = (): BrokerHarness => replicas.find((r) => r.app.get(BreakerLeadership).current.fence !== null)!;
  const followers = (): BrokerHarness[] => replicas.filter((r) => r !== leader());
  const nameOf = (r: BrokerHarness): string => r.app.get(BreakerLeadership).replica;

  async function primaryOn(replica: BrokerHarness): Promise<ProviderView> {
    const res = await request(replica.url).get('/v1/health/cpaas').expect(200);
    return (res.body.providers as ProviderView[]).find((p) => p.name === 'primary')!;
  }

  async function onEvery(check: (p: ProviderView) => boolean): Promise<void> {
    await eventually(async () => (await Promise.all(replicas.map(primaryOn))).every(check), 300, 50);
  }

  function force(on: BrokerHarness, body: unknown, provider = 'primary'): request.Test {
    return request(on.url)
      .post(`/v1/admin/providers/${provider}/breaker`)
      .set('authorization', `Bearer ${ADMIN_TOKEN}`)
      .send(body as object);
  }

  async function history(): Promise<TransitionView[]> {
    const res = await request(replicas[0].url).get('/v1/health/cpaas/history?provider=primary').expect(200);
    return res.body.transitions as TransitionView[];
  }

  async function metric(replica: BrokerHarness, series: string): Promise<number> {
    const res = await request(replica.url).get('/metrics').expect(200);
    const line = (res.text as string).split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
  }

  const counts = async (): Promise<{ overrides: number; transitions: number }> => {
    const [row]: Array<{ overrides: number; transitions: number }> = await db.query(
      `SELECT (SELECT count(*)::int FROM breaker_overrides) AS overrides, (SELECT count(*)::int FROM breaker_transitions) AS transitions`,
    );
    return row;
  };

  it('all three follow one leader', async () => {
    await eventually(async () => replicas.filter((r) => r.app.get(BreakerLeadership).current.fence !== null).length === 1, 300, 50);
    expect(leader()).toBe(replicas[0]);
  });

  it('a force OPEN asked of a follower is applied by the leader and seen by every replica, with who and why', async () => {
    const asked = followers()[0];
    const before = (await history()).length;
    const res = await force(asked, { state: 'OPEN', reason: 'carrier reports an SS7 outage in Lagos' }).expect(200);
    // The answer is the asking replica's own view, once it shows the forced state.
    expect(res.body).toMatchObject({ name: 'primary', state: 'OPEN', forcedBy: 'admin', reason: 'carrier reports an SS7 outage in Lagos' });
    expect(res.body.lastError).toBeNull(); // a force is not a failure
    await onEvery((p) => p.state === 'OPEN' && p.forcedBy === 'admin' && p.reason === 'carrier reports an SS7 outage in Lagos');

    // The leader applied it: the request says so, and the one history row it made names it.
    const [request_]: Array<{ status: string; applied_by: string; requested_by: string }> = await db.query(
      `SELECT status, applied_by, requested_by FROM breaker_overrides ORDER BY id DESC LIMIT 1`,
    );
    expect(request_).toEqual({ status: 'applied', applied_by: nameOf(leader()), requested_by: 'admin' });
    const rows = await history();
    expect(rows).toHaveLength(before + 1);
    expect(rows[0]).toMatchObject({
      provider: 'primary',
      from: 'CLOSED',
      to: 'OPEN',
      reason: 'carrier reports an SS7 outage in Lagos',
      forcedBy: 'admin',
    });

    // Every replica routes new sessions away from it, and tells a forced OPEN from a tripped one.
    for (const replica of replicas) {
      expect((await createSession(replica.url, sessionBody(freshPair())).expect(201)).body.provider).toBe('failover');
      expect(await metric(replica, 'cpaas_breaker_state{provider="primary"}')).toBe(2);
      expect(await metric(replica, 'cpaas_breaker_forced{provider="primary"}')).toBe(1);
      expect(await metric(replica, 'cpaas_breaker_forced{provider="failover"}')).toBe(0);
    }

    // Operators hear of it as of any transition, with who forced it.
    let event: { type: string; data: Record<string, unknown> } | undefined;
    await eventually(async () => {
      for (const got of receiver.received.filter((r) => r.path === '/hooks/ops')) {
        const body = verifyWebhook<{ type: string; data: Record<string, unknown> }>({
          payload: got.body,
          headers: got.headers,
          secret: OPS_SECRET,
        }).body;
        if (body.type === 'provider.state_changed' && body.data.forcedBy === 'admin') event = body;
      }
      return event !== undefined;
    });
    expect(event!.data).toMatchObject({
      provider: 'primary',
      from: 'CLOSED',
      to: 'OPEN',
      reason: 'carrier reports an SS7 outage in Lagos',
    });
  });

  it('a force CLOSED asked of another follower starts CLOSED with fresh counters, and it trips again at the 5th failure', async () => {
    const asked = followers()[1];
    const res = await force(asked, { state: 'CLOSED', reason: '  vendor confirmed the fix  ' }).expect(200);
    expect(res.body).toMatchObject({ state: 'CLOSED', forcedBy: 'admin', reason: 'vendor confirmed the fix', consecutiveFailures: 0 });
    await onEvery((p) => p.state === 'CLOSED' && p.forcedBy === 'admin');
    for (const replica of replicas) expect(await metric(replica, 'cpaas_breaker_forced{provider="primary"}')).toBe(1);
    const counted = await Promise.all(replicas.map(primaryOn));
    expect((await createSession(replicas[2].url, sessionBody(freshPair())).expect(201)).body.provider).toBe('primary');
    // Every replica counts that success before the failures begin: it reaches the other two in a batch
    // (BREAKER_OUTCOME_BATCH_MS), and a success counted after a replica's own first failure would end its run
    // of failures there (a loaded machine's whole-suite run saw one replica stop at 3).
    await eventually(
      async () => (await Promise.all(replicas.map(primaryOn))).every((p, i) => p.windowCalls > counted[i].windowCalls),
      300,
      50,
    );

    // From there, the rules: 4 failures in a row (over the three replicas) keep it CLOSED, the 5th opens it.
    await setFault(sim.url, 'primary', { mode: 'down' });
    try {
      const order = [replicas[0], replicas[1], replicas[2], replicas[0]];
      for (const on of order) expect((await createSession(on.url, sessionBody(freshPair())).expect(201)).body.provider).toBe('failover');
      await onEvery((p) => p.state === 'CLOSED' && p.consecutiveFailures === 4);
      await createSession(replicas[1].url, sessionBody(freshPair())).expect(201);
      await onEvery((p) => p.state === 'OPEN' && p.forcedBy === null && p.reason === '5 consecutive failures');
    } finally {
      await setFault(sim.url, 'primary', { mode: 'ok' });
    }
    const [tripped] = await history();
    expect(tripped).toMatchObject({ from: 'CLOSED', to: 'OPEN', reason: '5 consecutive failures', forcedBy: null });
    for (const replica of replicas) expect(await metric(replica, 'cpaas_breaker_forced{provider="primary"}')).toBe(0);
  });

  it('a force asked of the leader itself is applied the same way', async () => {
    const res = await force(leader(), { state: 'CLOSED', reason: 'back in rotation' }).expect(200);
    expect(res.body).toMatchObject({ state: 'CLOSED', forcedBy: 'admin' });
    await onEvery((p) => p.state === 'CLOSED' && p.forcedBy === 'admin' && p.reason === 'back in rotation');
    expect((await history())[0]).toMatchObject({ from: 'OPEN', to: 'CLOSED', forcedBy: 'admin', reason: 'back in rotation' });
  });

  it.each([
    ['HALF_OPEN', { state: 'HALF_OPEN', reason: 'try it' }, 'state', STATE_MESSAGE],
    ['a lower-case state', { state: 'open', reason: 'lower case' }, 'state', STATE_MESSAGE],
    ['no state', { reason: 'no state' }, 'state', STATE_MESSAGE],
    ['no reason', { state: 'OPEN' }, 'reason', 'reason is required: say why (it is recorded in the breaker history)'],
    [
      'a blank reason',
      { state: 'OPEN', reason: '   ' },
      'reason',
      'reason must not be blank: say why (it is recorded in the breaker history)',
    ],
    ['a reason that is no string', { state: 'OPEN', reason: 42 }, 'reason', 'reason must be a string'],
    ['a reason of 501 characters', { state: 'OPEN', reason: 'x'.repeat(501) }, 'reason', 'reason must be at most 500 characters'],
    ['a "by" of its own', { state: 'OPEN', reason: 'why', by: 'someone else' }, 'by', 'is not allowed'],
  ])('refuses %s with a 400 problem naming the field, and changes nothing', async (_label, body, field, message) => {
    const before = await counts();
    const res = await force(followers()[0], body).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors).toEqual([{ field, message }]);
    expect(await counts()).toEqual(before);
  });

  it('answers 404 for an unknown provider and 401 without the admin token, recording nothing', async () => {
    const before = await counts();
    const unknown = await force(replicas[1], { state: 'OPEN', reason: 'who?' }, 'nope').expect(404);
    expect(unknown.body).toMatchObject({ status: 404, title: 'Unknown provider', detail: 'No provider named "nope".' });
    await request(replicas[1].url).post('/v1/admin/providers/primary/breaker').send({ state: 'OPEN', reason: 'no token' }).expect(401);
    expect(await counts()).toEqual(before);
  });

  it('with no leader to take it, the request is withdrawn: 503, and nothing changes anywhere', async () => {
    const lease: Array<{ holder: string; epoch: number; expires_at: Date }> = await db.query(
      `SELECT holder, epoch, expires_at FROM cluster_leases WHERE name = 'breaker-leader'`,
    );
    // Someone else holds the lease now (as after a takeover the leader has not noticed yet): its fence no longer holds.
    await db.query(`UPDATE cluster_leases SET holder = 'elsewhere', epoch = epoch + 1 WHERE name = 'breaker-leader'`);
    const before = await counts();
    try {
      const res = await force(followers()[0], { state: 'OPEN', reason: 'nobody will take this' }).expect(503);
      expect(res.body).toMatchObject({ type: '/problems/breaker-leader-unavailable', title: 'No breaker leader' });
      expect(res.body.detail).toMatch(/nothing changed/);
    } finally {
      await db.query(`UPDATE cluster_leases SET holder = $1, epoch = $2, expires_at = $3 WHERE name = 'breaker-leader'`, [
        lease[0].holder,
        lease[0].epoch,
        lease[0].expires_at,
      ]);
    }
    const [last]: Array<{ status: string; applied_by: string | null }> = await db.query(
      `SELECT status, applied_by FROM breaker_overrides ORDER BY id DESC LIMIT 1`,
    );
    expect(last).toEqual({ status: 'withdrawn', applied_by: null });
    expect(await counts()).toEqual({ overrides: before.overrides + 1, transitions: before.transitions });
    for (const replica of replicas) expect(await primaryOn(replica)).toMatchObject({ state: 'CLOSED', reason: 'back in rotation' });
  });
});
