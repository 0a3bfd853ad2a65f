/**
 * The database's leader lost under load (issue #32, docs/operations.md#past-one-database-server): two
 * built brokers whose DATABASE_URL names HAProxy in front of two PostgreSQL 15 nodes under Patroni
 * (synchronous_mode), etcd as Patroni's store, all from deploy/ha (test/drills/ha-cluster.ts).
 *
 * Steady creates go through both brokers, relays through one (the simulator's webhooks) and every
 * session's `session.created` to a webhook receiver. Two rounds: the leader's postmaster killed with
 * kill -9, then the leader's whole node (Patroni and every PostgreSQL process) killed with kill -9 and
 * started again. Each round waits for Patroni to promote the standby, for creates to resume and for
 * the old leader to come back as the sync standby, then checks the LISTEN paths on the new leader
 * without restarting a broker: a breaker trip on one broker reaching the other, a narrowed destination
 * list reaching the other broker's memory, an Idempotency-Key waiter on one broker woken by the other's
 * answer, a webhook woken with the delivery poll set to 10 minutes.
 *
 * At the end: every create answered 201 is in the database (on the leader and on the sync standby), the
 * pool rule holds, every session.created and every accepted relay was delivered, the breakers have one
 * leader that both brokers name, and no request took longer than a create can take.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { WebhookReceiver } from '@app/testing';
import { overlappingPairs, startCreateLoop, clientSideClashes, type CreateLoop, type CreateRecord } from './create-loop';
import { HaCluster, type NodeName } from './ha-cluster';
import { checkPoolRule, withClient } from '../../bench/support/pool-rule';
import {
  BENCH_ADMIN_TOKEN,
  BENCH_API_KEY,
  freePort,
  setFault,
  sleep,
  startBrokerProcess,
  startSimulatorProcess,
  waitFor,
  type BrokerProcess,
  type SimulatorProcess,
} from '../../bench/support/stack';

export type RoundKind = 'postmaster' | 'node';

const PROVIDER_CALL_TIMEOUT_MS = 1000;
/** The longest a create may take (IdempotencyService.takeoverAfterMs): every provider tried up to its timeout, plus one call and 5 s. */
const CREATE_BOUND_MS = PROVIDER_CALL_TIMEOUT_MS * 3 + 5000;
const BROKER_ENV = {
  LOG_LEVEL: 'warn',
  SIM_SEED_NUMBERS: '10',
  PROVIDER_CALL_TIMEOUT_MS: String(PROVIDER_CALL_TIMEOUT_MS),
  DATABASE_POOL_SIZE: '10',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  // Nothing but a NOTIFY (or the LISTEN connection coming back) wakes the delivery workers within the drill.
  WEBHOOK_POLL_INTERVAL_MS: '600000',
  // A 1 s lease for the breaker leader; its health checks every second, so a trip closes again within the round.
  BREAKER_HEALTH_INTERVAL_MS: '1000',
  BREAKER_CLOSE_AFTER_MS: '300',
  BREAKER_CLOSE_MIN_PROBES: '3',
  RELAY_RETRY_INTERVAL_MS: '1000',
};

export interface RoundResult {
  kind: RoundKind;
  killed: NodeName;
  promoted: NodeName | null;
  /** kill -9 to Patroni answering 200 on /primary on the other node. */
  promotedSeconds: number | null;
  /** kill -9 to the first create (sent after the kill) answered 201. */
  failoverSeconds: number | null;
  /** The longest stretch either broker's /health/ready was not 200. */
  readyDownSeconds: number;
  /** Whether both brokers' readiness left 200 after the kill, and was 200 again before the round's checks. */
  readiness: { wentDown: boolean; cameBack: boolean };
  /** Non-201 answers to creates sent between the kill and the round's end, by kind. */
  errorsDuringFailover: number;
  errorKinds: Record<string, number>;
  createsAfterFailover: number;
  /** kill -9 to the old leader running again as the sync standby. */
  rejoinedSeconds: number | null;
  listenPaths: ListenPaths;
}

export interface ListenPaths {
  breakerTripReachedOtherBroker: boolean;
  breakerClosedAgainOnBoth: boolean;
  destinationChangeReachedOtherBroker: boolean;
  idempotencyWaiterGotSameSession: boolean;
  /** Milliseconds between the first request's answer and the waiter's on the other broker. */
  idempotencyWaiterLagMs: number | null;
  webhookWokenWithoutPoll: boolean;
  /** Milliseconds from the create's answer to its session.created at the receiver (null: not within 5 s). */
  webhookWakeMs: number | null;
}

export interface FailoverDrillResult {
  drill: 'database-failover';
  ok: boolean;
  failures: string[];
  acknowledgedLost: number;
  acknowledgedLostOnStandby: number;
  lostDetail: Array<{ id: string; found: string | null; close: string }>;
  createsAfterFailover: number;
  failoverSeconds: number | null;
  readyDownSeconds: number;
  errorsDuringFailover: number;
  rounds: RoundResult[];
  creates: { answered201: number; answers: Record<string, number>; slowestMs: number; overBound: number; boundMs: number };
  poolRule: { violations: number; unguarded: number; activeSessions: number; clientSideClashes: number };
  webhooks: { sessionsCreated: number; notDelivered: number };
  relays: { accepted: number; refused: number; notRelayed: number; unrelayedDetail: unknown[] };
  /** What the brokers' 500s were, from their `unhandled error` log lines. */
  serverErrors: Record<string, number>;
  serverErrorStacks: Record<string, string>;
  breakerLeader: { leases: number; bothBrokersNameIt: boolean };
  /** Each broker's database series at the end (/metrics). */
  metrics: Array<Record<string, number>>;
  durability: { synchronousCommit: string; synchronousStandbyNames: string };
  brokersRestarted: number;
  clusterStartSeconds: number;
  logs: string | null;
}

/** The 500s a broker logged (`unhandled error` lines), counted by kind as its output arrives, with the first one's stack of each kind. */
function watchServerErrors(broker: BrokerProcess, stacks: Record<string, string>): Record<string, number> {
  const kinds: Record<string, number> = {};
  let rest = '';
  broker.child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('unhandled error')) continue;
      let kind = line.slice(0, 200);
      try {
        const entry = JSON.parse(line) as { err?: { type?: string; code?: string; message?: string; stack?: string } };
        kind = [entry.err?.type, entry.err?.code, entry.err?.message].filter(Boolean).join(' ');
        stacks[kind] ??= (entry.err?.stack ?? '').split('\n').slice(1, 8).join(' | ');
      } catch {
        /* not JSON: keep the line */
      }
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
  });
  return kinds;
}

/** A broker's output from its start on, in the cluster's log folder (kept when the drill fails). */
function keepOutput(broker: BrokerProcess, file: string): void {
  const log = createWriteStream(file);
  log.write(broker.output());
  broker.child.stdout!.pipe(log, { end: false });
  broker.child.stderr!.pipe(log, { end: false });
  broker.child.once('close', () => log.end());
}

interface ReadySample {
  broker: number;
  t: number;
  status: number;
}

interface Relay {
  provider: string;
  from: string;
  to: string;
  proxyNumber: string;
  text: string;
  status: number;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;
const now = () => performance.now();

function answerKind(r: CreateRecord): string {
  if (r.status === 0) return 'no answer';
  return r.problemType ? `${r.status} ${r.problemType}` : String(r.status);
}

function countKinds(records: CreateRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) out[answerKind(r)] = (out[answerKind(r)] ?? 0) + 1;
  return out;
}

function mergeCounts(all: Array<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const counts of all) for (const [k, n] of Object.entries(counts)) out[k] = (out[k] ?? 0) + n;
  return out;
}

async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

function api(broker: BrokerProcess, path: string, init: RequestInit & { key?: string; admin?: boolean } = {}): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  headers.authorization = `Bearer ${init.admin ? BENCH_ADMIN_TOKEN : (init.key ?? BENCH_API_KEY)}`;
  return fetch(`${broker.url}${path}`, {
    ...init,
    headers: { ...headers, ...(init.headers as Record<string, string>) },
    signal: AbortSignal.timeout(15_000),
  });
}

/** Polls both brokers' /health/ready every 250 ms until stopped. */
function sampleReadiness(brokers: BrokerProcess[]): { samples: ReadySample[]; stop(): Promise<void> } {
  const samples: ReadySample[] = [];
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      await Promise.all(
        brokers.map(async (b, broker) => {
          const t = now();
          const status = await fetch(`${b.url}/health/ready`, { signal: AbortSignal.timeout(3000) })
            .then(async (res) => (await res.arrayBuffer(), res.status))
            .catch(() => 0);
          samples.push({ broker, t, status });
        }),
      );
      await sleep(250);
    }
  };
  const running = loop();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

/** Inbound texts through the simulator (to broker A), one every 300 ms, on a session answered 201 and left open. */
function startRelays(sim: SimulatorProcess, loop: CreateLoop): { relays: Relay[]; paused: { value: boolean }; stop(): Promise<void> } {
  const relays: Relay[] = [];
  const paused = { value: false };
  let stopped = false;
  let n = 0;
  const run = async () => {
    while (!stopped) {
      await sleep(300);
      if (paused.value) continue;
      const open = loop.created().filter((r) => !r.closing);
      if (open.length === 0) continue;
      const s = open[Math.floor(Math.random() * Math.min(open.length, 50)) + Math.max(0, open.length - 50)] ?? open[open.length - 1];
      const text = `ha-drill relay ${++n}`;
      const relay: Relay = {
        provider: s.provider!,
        from: s.participants![0],
        to: s.participants![1],
        proxyNumber: s.proxyNumber!,
        text,
        status: 0,
      };
      relay.status = await fetch(`${sim.url}/_sim/providers/${s.provider}/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'sms', from: relay.from, to: relay.proxyNumber, text }),
        signal: AbortSignal.timeout(15_000),
      })
        .then(async (res) => (await res.arrayBuffer(), res.status))
        .catch(() => 0);
      relays.push(relay);
    }
  };
  const running = run();
  return {
    relays,
    paused,
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

async function primary(broker: BrokerProcess): Promise<{ state: string; scope: string }> {
  const body = await json<{ providers: Array<{ name: string; state: string; scope: string }> }>(
    await fetch(`${broker.url}/v1/health/cpaas`),
  );
  return body.providers.find((p) => p.name === 'primary')!;
}

const primaryState = async (broker: BrokerProcess) => (await primary(broker)).state;

/** A create with numbers of its own, outside the load, on one broker. */
async function createOne(broker: BrokerProcess, n: number, options: { key?: string; idempotencyKey?: string } = {}): Promise<Response> {
  const tail = String(n).padStart(4, '0');
  return api(broker, '/v1/sessions', {
    method: 'POST',
    key: options.key,
    headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {},
    body: JSON.stringify({ channel: 'sms', participants: [{ number: `+234805100${tail}` }, { number: `+234805200${tail}` }] }),
  });
}

/**
 * The LISTEN paths after a failover, each through the other broker than the one that made the change:
 * breaker state, destination memory, Idempotency-Key waiters, webhook wakes.
 */
async function checkListenPaths(
  brokers: BrokerProcess[],
  sim: SimulatorProcess,
  receiver: WebhookReceiver,
  destinations: { accountId: string; key: string },
  round: number,
): Promise<ListenPaths> {
  const [a, b] = brokers;
  const ok = (p: Promise<unknown>) =>
    p.then(
      () => true,
      () => false,
    );

  // Breaker: trip the primary through A; B adopts the leader's transition (NOTIFY broker_provider_state).
  await setFault(sim.url, 'primary', { mode: 'down' });
  for (let j = 0; j < 10 && (await primaryState(a)) !== 'OPEN'; j++) await (await createOne(a, round * 100 + j)).arrayBuffer();
  // In the cluster's scope: a broker cut off from the cluster would trip on its own share of the load.
  const breakerTripReachedOtherBroker = await ok(
    waitFor(
      'OPEN on B',
      async () => {
        const seen = await primary(b);
        return seen.state === 'OPEN' && seen.scope === 'cluster';
      },
      50,
      100,
    ),
  );
  await setFault(sim.url, 'primary', { mode: 'ok' });
  const breakerClosedAgainOnBoth = await ok(
    waitFor('primary CLOSED on both', async () => (await primaryState(a)) === 'CLOSED' && (await primaryState(b)) === 'CLOSED', 600, 100),
  );

  // Destinations: narrowed through A; B refuses within a notification's delay (its own re-read is every 30 s).
  const narrowed = await api(a, `/v1/admin/accounts/${destinations.accountId}/destinations`, {
    method: 'PUT',
    admin: true,
    body: JSON.stringify({ allowedCountries: ['GH'] }),
  });
  await narrowed.arrayBuffer();
  const destinationChangeReachedOtherBroker =
    narrowed.status === 200 &&
    (await ok(
      waitFor('narrowing reaches B', async () => (await createOne(b, 9000 + round, { key: destinations.key })).status === 422, 20, 100),
    ));
  await (
    await api(a, `/v1/admin/accounts/${destinations.accountId}/destinations`, {
      method: 'PUT',
      admin: true,
      body: JSON.stringify({ allowedCountries: null }),
    })
  ).arrayBuffer();

  // Idempotency: the first request on A is held in its bind; the same key on B waits for it.
  // 700 ms: under PROVIDER_CALL_TIMEOUT_MS, so the bind succeeds slowly rather than failing.
  await setFault(sim.url, 'primary', { mode: 'ok', latencyMs: 700 });
  const key = `ha-drill-${round}-${randomBytes(4).toString('hex')}`;
  const first = createOne(a, 8000 + round, { idempotencyKey: key }).then(async (res) => ({
    res,
    body: await json<{ id?: string }>(res),
    at: now(),
  }));
  await sleep(200);
  const second = createOne(b, 8000 + round, { idempotencyKey: key }).then(async (res) => ({
    res,
    body: await json<{ id?: string }>(res),
    at: now(),
  }));
  const [one, two] = await Promise.all([first, second]);
  await setFault(sim.url, 'primary', { mode: 'ok' });
  const idempotencyWaiterGotSameSession = one.res.status === 201 && two.res.status === 201 && one.body.id === two.body.id;

  // Webhooks: the poll is 10 minutes away; only the NOTIFY after the commit can deliver this in time. Usually
  // 25–250 ms; 30 s allowed (once, in the whole suite on two cores, round 1's took over 5 s), a twentieth of the poll.
  const woken = await createOne(b, 7000 + round);
  const { id } = await json<{ id?: string }>(woken);
  const answeredAt = now();
  const webhookWokenWithoutPoll =
    woken.status === 201 && (await ok(waitFor('session.created delivered', async () => deliveredIds(receiver).has(id!), 300, 100)));

  return {
    breakerTripReachedOtherBroker,
    breakerClosedAgainOnBoth,
    destinationChangeReachedOtherBroker,
    idempotencyWaiterGotSameSession,
    idempotencyWaiterLagMs: idempotencyWaiterGotSameSession ? Math.round(two.at - one.at) : null,
    webhookWokenWithoutPoll,
    webhookWakeMs: webhookWokenWithoutPoll ? Math.round(now() - answeredAt) : null,
  };
}

function deliveredIds(receiver: WebhookReceiver): Set<string> {
  const ids = new Set<string>();
  for (const r of receiver.received) {
    const event = JSON.parse(r.body) as { type: string; data: { session?: { id: string } } };
    if (event.type === 'session.created' && event.data.session) ids.add(event.data.session.id);
  }
  return ids;
}

/** The longest time any broker's readiness was not 200, in samples taken from `from` on. */
function longestNotReady(samples: ReadySample[], from: number, brokers: number): number {
  let longest = 0;
  for (let broker = 0; broker < brokers; broker++) {
    let downSince: number | null = null;
    for (const s of samples.filter((x) => x.broker === broker && x.t >= from)) {
      if (s.status !== 200 && downSince === null) downSince = s.t;
      if (s.status === 200 && downSince !== null) {
        longest = Math.max(longest, s.t - downSince);
        downSince = null;
      }
    }
  }
  return longest;
}

/**
 * Of `records` answered 201, those not in the database behind `url` in the state their answers left them:
 * active, or closed after a close answered 200; either after a close that got no 200 (it may have committed).
 */
async function lost(url: string, records: CreateRecord[]): Promise<Array<{ id: string; found: string | null; close: string }>> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ id: string; status: string }>(`SELECT id, status FROM sessions WHERE id = ANY($1::uuid[])`, [
      records.map((r) => r.id!),
    ]);
    const found = new Map(rows.map((r) => [r.id, r.status]));
    const expected = (r: CreateRecord) => (r.closed ? ['closed'] : r.closing ? ['active', 'closed'] : ['active']);
    return records
      .filter((r) => !expected(r).includes(found.get(r.id!) ?? 'missing'))
      .map((r) => ({ id: r.id!, found: found.get(r.id!) ?? null, close: r.closed ? 'answered 200' : r.closing ? 'sent, no 200' : 'none' }));
  });
}

export async function databaseFailoverDrill(): Promise<FailoverDrillResult> {
  const failures: string[] = [];
  const check = (condition: boolean, what: string) => {
    if (!condition) failures.push(what);
  };
  const startedAt = now();
  const cluster = await HaCluster.start();
  const clusterStartSeconds = seconds(now() - startedAt);
  let receiver: WebhookReceiver | undefined;
  let sim: SimulatorProcess | undefined;
  const brokers: BrokerProcess[] = [];
  // Exiting without the finally below (a signal): the brokers and the simulator go too, as the cluster does.
  const killChildren = () => {
    for (const child of [...brokers, sim]) if (child?.running()) child.child.kill('SIGKILL');
  };
  process.once('exit', killChildren);
  let loop: CreateLoop | undefined;
  let relayLoop: ReturnType<typeof startRelays> | undefined;
  let readiness: ReturnType<typeof sampleReadiness> | undefined;
  let result: FailoverDrillResult | undefined;
  let thrown: Error | undefined;
  try {
    const password = randomBytes(12).toString('hex');
    const durability = await withClient(cluster.superuserUrl, async (c) => {
      await c.query(`CREATE ROLE broker LOGIN PASSWORD '${password}'`);
      await c.query('CREATE DATABASE broker OWNER broker');
      const commit = (await c.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit;
      const names = (await c.query<{ synchronous_standby_names: string }>('SHOW synchronous_standby_names')).rows[0]
        .synchronous_standby_names;
      return { synchronousCommit: commit, synchronousStandbyNames: names };
    });
    check(durability.synchronousCommit === 'on' && durability.synchronousStandbyNames !== '', 'synchronous replication is on');
    const url = cluster.url('broker', password, 'broker');

    receiver = await WebhookReceiver.start();
    const portA = await freePort();
    sim = await startSimulatorProcess(`http://127.0.0.1:${portA}`);
    brokers.push(await startBrokerProcess(url, sim.url, BROKER_ENV, { port: portA }));
    brokers.push(await startBrokerProcess(url, sim.url, BROKER_ENV));
    const serverErrorStacks: Record<string, string> = {};
    const serverErrors = brokers.map((b) => watchServerErrors(b, serverErrorStacks));
    brokers.forEach((b, i) => keepOutput(b, join(cluster.dir, 'log', `broker-${'ab'[i]}.log`)));
    const [a] = brokers;
    await (await api(a, '/v1/account/callback-url', { method: 'PUT', body: JSON.stringify({ callbackUrl: receiver.url }) })).arrayBuffer();
    const account = await json<{ account: { id: string }; apiKey: { key: string } }>(
      await api(a, '/v1/admin/accounts', { method: 'POST', admin: true, body: JSON.stringify({ name: 'ha-drill destinations' }) }),
    );
    const destinations = { accountId: account.account.id, key: account.apiKey.key };

    readiness = sampleReadiness(brokers);
    loop = startCreateLoop({
      brokers: () => brokers.map((b) => b.url),
      workers: 4,
      pair: overlappingPairs(3000, 17),
      maxRequests: 1_000_000,
      closeShare: 0.25,
      pauseMs: 20,
      timeoutMs: CREATE_BOUND_MS + 7000,
    });
    relayLoop = startRelays(sim, loop);

    const rounds: RoundResult[] = [];
    for (const [index, kind] of (['postmaster', 'node'] as const).entries()) {
      await loop.createdAtLeast(loop.created().length + 80, 1200);
      await cluster.waitHealthy();
      const killed = (await cluster.leader())!;
      const other: NodeName = killed === 'node1' ? 'node2' : 'node1';
      const tKill = now();
      if (kind === 'postmaster') cluster.killPostmaster(killed);
      else cluster.killNode(killed);

      let promotedAt: number | null = null;
      await waitFor(
        `${other} promoted`,
        async () => {
          if ((await cluster.leader()) !== other) return false;
          promotedAt = now();
          return true;
        },
        300,
        100,
      ).catch(() => undefined);
      const resumed = () => loop!.records.find((r) => r.status === 201 && r.startedAt! >= tKill);
      await waitFor('creates answered 201 again', async () => resumed() !== undefined, 600, 100).catch(() => undefined);
      const cameBack = await waitFor('both brokers ready', async () => {
        const last = brokers.map((_, i) => readiness!.samples.filter((s) => s.broker === i && s.t > tKill).at(-1));
        return last.every((s) => s?.status === 200);
      }).then(
        () => true,
        () => false,
      );
      const wentDown = brokers.every((_, i) => readiness!.samples.some((s) => s.broker === i && s.t > tKill && s.status !== 200));
      const first = resumed();
      const resumedAt = first ? first.startedAt! + first.ms! : null;
      await loop.createdAtLeast(loop.created().length + 60, 1200).catch(() => undefined);

      if (kind === 'node') cluster.startPatroni(killed);
      let rejoinedAt: number | null = null;
      await cluster
        .waitHealthy(600)
        .then(() => (rejoinedAt = now()))
        .catch(() => undefined);
      // The checks take the primary down for a moment: relays would then wait out their backoff, which is not what this measures.
      relayLoop.paused.value = true;
      const listenPaths = await checkListenPaths(brokers, sim, receiver, destinations, index + 1);
      relayLoop.paused.value = false;
      const roundEnd = now();
      const inRound = loop.records.filter((r) => r.startedAt! >= tKill && r.startedAt! < roundEnd);
      const errors = inRound.filter((r) => r.status !== 201 && r.problemType !== '/problems/pool-exhausted');
      const round: RoundResult = {
        kind,
        killed,
        promoted: promotedAt !== null ? other : null,
        promotedSeconds: promotedAt !== null ? seconds(promotedAt - tKill) : null,
        failoverSeconds: resumedAt !== null ? seconds(resumedAt - tKill) : null,
        readyDownSeconds: seconds(longestNotReady(readiness.samples, tKill - 500, brokers.length)),
        readiness: { wentDown, cameBack },
        errorsDuringFailover: errors.length,
        errorKinds: countKinds(errors),
        createsAfterFailover: resumedAt !== null ? inRound.filter((r) => r.status === 201 && r.startedAt! >= resumedAt).length : 0,
        rejoinedSeconds: rejoinedAt !== null ? seconds(rejoinedAt - tKill) : null,
        listenPaths,
      };
      rounds.push(round);
      check(round.promoted === other, `round ${kind}: ${other} promoted`);
      check(round.failoverSeconds !== null && round.createsAfterFailover > 0, `round ${kind}: creates resumed`);
      check(round.rejoinedSeconds !== null, `round ${kind}: ${killed} back as the sync standby`);
      check(wentDown && cameBack, `round ${kind}: both brokers not ready while there was no leader, ready again after`);
      for (const [path, passed] of Object.entries(listenPaths))
        if (typeof passed === 'boolean') check(passed, `round ${kind}: LISTEN path ${path}`);
    }

    await relayLoop.stop();
    await loop.stop();
    await readiness.stop();

    const created = loop.created();
    const acknowledgedLost = await lost(url, created);
    await cluster.waitHealthy();
    const standby: NodeName = (await cluster.leader()) === 'node1' ? 'node2' : 'node1';
    const acknowledgedLostOnStandby = await waitFor(
      'standby caught up',
      async () => (await lost(cluster.nodeUrl(standby, 'broker', password, 'broker'), created)).length === 0,
      50,
      200,
    )
      .then(() => 0)
      .catch(async () => (await lost(cluster.nodeUrl(standby, 'broker', password, 'broker'), created)).length);
    const poolRule = await checkPoolRule(url);
    const clashes = clientSideClashes(loop.records).length;

    const ids = created.map((r) => r.id!);
    await waitFor(
      'every session.created delivered',
      async () => {
        const delivered = deliveredIds(receiver!);
        return ids.every((id) => delivered.has(id));
      },
      300,
      200,
    ).catch(() => undefined);
    const delivered = deliveredIds(receiver);
    const notDelivered = ids.filter((id) => !delivered.has(id)).length;

    const accepted = relayLoop.relays.filter((r) => r.status >= 200 && r.status < 300);
    const relayed = async () => {
      const out = new Set<string>();
      for (const provider of ['primary', 'failover']) {
        const res = await fetch(`${sim!.url}/_sim/providers/${provider}/calls?type=sms`);
        for (const call of await json<Array<{ text?: string; to?: string }>>(res)) out.add(`${call.to}|${call.text}`);
      }
      return out;
    };
    await waitFor(
      'every accepted relay relayed',
      async () => {
        const seen = await relayed();
        return accepted.every((r) => seen.has(`${r.to}|${r.text}`));
      },
      100,
      300,
    ).catch(() => undefined);
    const seen = await relayed();
    const unrelayed = accepted.filter((r) => !seen.has(`${r.to}|${r.text}`));
    const notRelayed = unrelayed.length;
    const unrelayedDetail = await withClient(url, async (c) =>
      Promise.all(
        unrelayed.slice(0, 5).map(async (r) => {
          const { rows } = await c.query(
            `SELECT status, attempts, next_attempt_at, last_error FROM interactions WHERE to_number = $1 AND text = $2`,
            [r.to, r.text],
          );
          return { text: r.text, answered: r.status, interactions: rows as unknown[] };
        }),
      ),
    );

    const breakerLeader = await breakerLeaderCheck(url, brokers);
    const metrics = await Promise.all(brokers.map(scrapeDatabaseSeries));
    const answers = countKinds(loop.records);
    const slowestMs = Math.round(Math.max(...loop.records.map((r) => r.ms ?? 0)));
    const overBound = loop.records.filter((r) => r.status === 0 || (r.ms ?? 0) > CREATE_BOUND_MS).length;
    const brokersRestarted = brokers.filter((b) => !b.running()).length;

    check(acknowledgedLost.length === 0, 'every create answered 201 is on the leader');
    check(acknowledgedLostOnStandby === 0, 'every create answered 201 is on the sync standby');
    check(poolRule.violations === 0 && poolRule.unguarded === 0 && clashes === 0, 'the pool rule holds');
    check(notDelivered === 0, 'every session.created delivered');
    check(accepted.length > 0 && notRelayed === 0, 'every accepted relay relayed');
    check(breakerLeader.leases === 1 && breakerLeader.bothBrokersNameIt, 'the breakers have one leader, named by both brokers');
    check(overBound === 0, `no create took longer than ${CREATE_BOUND_MS} ms or went unanswered`);
    check(brokersRestarted === 0, 'both brokers still running');
    const server500s = mergeCounts(serverErrors);
    check(Object.keys(server500s).length === 0, 'no request answered 500 (while there is no leader: a problem+json 503)');
    check(
      metrics.every((m) => m.broker_db_listen_connected === 1 && m.broker_db_listen_reconnects_total >= rounds.length),
      'each broker LISTENs again, once back after each round (broker_db_listen_reconnects_total)',
    );

    result = {
      drill: 'database-failover',
      ok: false,
      failures,
      acknowledgedLost: acknowledgedLost.length,
      lostDetail: acknowledgedLost.slice(0, 10),
      acknowledgedLostOnStandby,
      createsAfterFailover: Math.min(...rounds.map((r) => r.createsAfterFailover)),
      failoverSeconds: rounds.some((r) => r.failoverSeconds === null) ? null : Math.max(...rounds.map((r) => r.failoverSeconds!)),
      readyDownSeconds: Math.max(...rounds.map((r) => r.readyDownSeconds)),
      errorsDuringFailover: rounds.reduce((n, r) => n + r.errorsDuringFailover, 0),
      rounds,
      creates: { answered201: created.length, answers, slowestMs, overBound, boundMs: CREATE_BOUND_MS },
      poolRule: { ...poolRule, clientSideClashes: clashes },
      webhooks: { sessionsCreated: ids.length, notDelivered },
      relays: { accepted: accepted.length, refused: relayLoop.relays.length - accepted.length, notRelayed, unrelayedDetail },
      serverErrors: server500s,
      serverErrorStacks,
      breakerLeader,
      metrics,
      durability,
      brokersRestarted,
      clusterStartSeconds,
      logs: null,
    };
    result.ok = failures.length === 0;
    return result;
  } catch (error) {
    thrown = error as Error;
    throw error;
  } finally {
    await relayLoop?.stop();
    await loop?.stop();
    await readiness?.stop();
    for (const b of brokers) await b.stop();
    await sim?.stop();
    await receiver?.close();
    process.removeListener('exit', killChildren);
    await cluster.stop();
    const logs = await cluster.remove(!result?.ok);
    if (result) result.logs = logs;
    if (thrown) thrown.message += ` (the cluster's logs: ${logs})`;
  }
}

const DATABASE_SERIES = [
  'broker_db_listen_connected',
  'broker_db_listen_reconnects_total',
  'broker_db_pool_connections_lost_total',
  'broker_db_pool_connections_opened_total',
];

async function scrapeDatabaseSeries(broker: BrokerProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${broker.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [name, value] = line.split(' ');
    if (DATABASE_SERIES.includes(name)) out[name] = Number(value);
  }
  return out;
}

/** One live breaker lease in the database, and both brokers following its holder. */
async function breakerLeaderCheck(url: string, brokers: BrokerProcess[]): Promise<{ leases: number; bothBrokersNameIt: boolean }> {
  const read = async () => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ holder: string }>(
        `SELECT holder FROM cluster_leases WHERE name = 'breaker-leader' AND expires_at > now()`,
      );
      const named = await Promise.all(
        brokers.map(async (b) =>
          json<{ leader: string | null; providers: Array<{ scope: string }> }>(await fetch(`${b.url}/v1/health/cpaas`)),
        ),
      );
      const bothBrokersNameIt =
        rows.length === 1 && named.every((n) => n.leader === rows[0].holder && n.providers.every((p) => p.scope === 'cluster'));
      return { leases: rows.length, bothBrokersNameIt };
    } finally {
      await client.end();
    }
  };
  let last = await read();
  for (let i = 0; i < 50 && !(last.leases === 1 && last.bothBrokersNameIt); i++) {
    await sleep(100);
    last = await read();
  }
  return last;
}
