/**
 * Session creates per second through the HTTP API, against the minimal SQL of one allocation driven
 * as hard as possible, in the same run, on the same PostgreSQL, at the same concurrency.
 *
 * Broker: `POST /v1/sessions` with autocannon (keep-alive connections, unique participant pair per
 * request) against the built broker (`dist/apps/broker/src/main.js`, a process of its own) with the
 * CPaaS simulator (a process of its own, zero latency) as both providers. Each create is the real
 * path: API key, validation, reservation transaction, the provider's bind over HTTP, activation with
 * its outbox event, the 201.
 *
 * SQL: one statement per allocation, on one connection per worker, as many workers as HTTP
 * connections: claim a proxy number keeping the pool rule (no participant already active on it),
 * insert the session and its two participants. No provider call, no HTTP, no outbox.
 *
 * No provider call: the same build with a provider that keeps no sessions (Twilio, docs/design.md, pointed at
 * Prism serving Twilio's OpenAPI), where a create is the reservation and the activation; the bench
 * checks that no create sent a vendor request.
 *
 * Every phase starts on emptied session tables and makes the same number of sessions, so both sides
 * see the same table sizes. Rounds rotate which phase goes first; figures are medians of rounds.
 * Then one broker run paced at half the measured maximum rate (open loop, evenly spaced, at most 20 s)
 * gives the p99 at half load, and bursts after 1 s and 30 s of quiet (`--quiets=1,30,1,30`: each twice, in
 * alternating order), each timed beside a machine probe (fixed arithmetic in a worker thread), then the
 * probe alone after the same quiet spells: whether a slow burst is the stack or the machine.
 *
 * PostgreSQL: a throwaway local server with default (durable) settings, logging statements slower than
 * `--slow-statement-ms` (50), checkpoints and autovacuum runs; the log is lined up with each phase's
 * slowest requests (`postgresLog`). Or a fresh database on the server of DATABASE_URL (no log read).
 * Prints one JSON object.
 * Usage: npm run bench:sessions [-- --connections=16 --amount=3000 --rounds=3 --numbers=100]
 *        npm run bench:sessions -- --scaling [--scaling-steps=1000,10000,200000]   (only: the create rate through the
 *          broker, the reservation and the pool-usage refresh at each count of active sessions; candidate-scaling.ts)
 *        npm run bench:sessions -- --quiet --rate=100   (only: bursts after 1 s and 30 s of quiet, this pool against
 *          one closing idle connections after 10 s as node-postgres does by default; and what a connection costs)
 *        npm run bench:sessions -- --against=DIR   (only: the broker's CPU per create, this build against the one
 *          built in DIR, rounds interleaved: each change to the create path measured A/B in one run; against.ts)
 *        npm run bench:sessions -- --postgres-ab [--variant=FILE]   (only: PostgreSQL's CPU per create, the minimal SQL against
 *          the create statement, and against the create statement after FILE's SQL: a change to its functions A/B; postgres-ab.ts)
 *        npm run bench:sessions -- --profile   (also: both brokers' CPU profiles in reports/profiles/; with --against, the
 *          two builds' brokers')
 */
import { cpus, loadavg } from 'node:os';
import { Client } from 'pg';
import { activateWithEvent, RESERVE_SQL, sessionCreated, type Session } from '../../apps/broker/src/sessions';
import { candidateScaling } from './candidate-scaling';
import { against } from './against';
import { createLadder } from './create-ladder';
import { brokerCreateStatement, freshPair, minimalAllocation, outbox } from './create-statements';
import { floors } from './floors';
import { postgresAb } from './postgres-ab';
import { startDirectBroker, type DirectBroker } from './direct-provider';
import { connectionCost, idleMachine, quietBursts, quietRatio, type BurstFigures } from './quiet-burst';
import { calibrateProbe } from '../support/machine-probe';
import { load, paced, type LoadResult } from '../support/load';
import { checkPoolRule, resetSessions, withClient } from '../support/pool-rule';
import { reserveParams } from '../support/reserve-params';
import { BENCH_API_KEY, startBrokerProcess, startDatabase, startSimulatorProcess } from '../support/stack';
import { phaseReport, scrape } from '../support/broker-metrics';
import { cpuMeter, machineBusyMs, ownCpuMs, parentPid, postgresCpuMs, processCpuMs } from '../support/cpu';
import { epochMs, lineUp, postgresLogSettings, readServerLog, RequestTimeline } from '../support/postgres-log';
import { mean, median, nowMs, numberArg, percentile, ratio, round } from '../support/stats';
import { runBench } from '../support/started';

const CONNECTIONS = numberArg('connections', 16);
const AMOUNT = numberArg('amount', 3000);
const ROUNDS = numberArg('rounds', 3);
const WARMUP = numberArg('warmup', 500);
const NUMBERS = numberArg('numbers', 100);
const BURST_SECONDS = numberArg('burst-seconds', 4);
/** The quiet spells before the bursts, in seconds, in this order (`--quiets=1,30,1,30`). */
const QUIETS_MS = (process.argv.find((a) => a.startsWith('--quiets='))?.slice(9) ?? '1,30,1,30').split(',').map((q) => Number(q) * 1000);
/** PostgreSQL logs every statement at least this slow (`log_min_duration_statement`). */
const SLOW_STATEMENT_MS = numberArg('slow-statement-ms', 50);
const CREATE_HEADERS = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };

function createBody(): string {
  const [a, b] = freshPair();
  return JSON.stringify({ channel: 'sms', participants: [{ number: a }, { number: b }] });
}

/**
 * The statements the broker sends for one create, run by the broker's own code (the allocator's
 * `RESERVE_SQL`; `activateWithEvent`, the activation and its outbox event in one statement): the
 * database work of the HTTP path without HTTP, Nest or the provider call. Shows where the gap to the
 * minimal SQL goes.
 */
async function brokerStatements(client: Client, accountId: string): Promise<void> {
  const participants = freshPair();
  // The allocator's own statement (one round trip, no explicit transaction), load order empty.
  const reserved = await client.query<{ id: string; proxy_number: string; created_at: Date; expires_at: Date }>(
    RESERVE_SQL,
    reserveParams({ provider: 'primary', accountId, participants }),
  );
  const row = reserved.rows[0];
  const session = {
    id: row.id,
    accountId,
    channels: ['sms'],
    status: 'active',
    provider: 'primary',
    proxyNumber: row.proxy_number,
    participants,
    bindingId: `b-${row.id}`,
    callbackUrl: null,
    metadata: {},
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    inactiveAt: row.expires_at,
  } as unknown as Session;
  // As TypeORM's `query` answers: the rows.
  const runner = { query: async (sql: string, params?: unknown[]) => (await client.query(sql, params)).rows };
  if (!(await activateWithEvent(runner, outbox, session, sessionCreated(session), (message) => console.warn(message))))
    throw new Error('activation changed nothing');
}

interface Phase {
  perSecond: number;
  p50: number;
  p99: number;
}

type Allocation = (client: Client, accountId: string) => Promise<void>;

async function sqlPhase(url: string, accountId: string, amount: number, allocate: Allocation = minimalAllocation): Promise<Phase> {
  const clients = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const client = new Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  const latencies: number[] = [];
  let left = amount;
  const started = nowMs();
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (left-- > 0) {
          const t0 = nowMs();
          await allocate(client, accountId);
          latencies.push(nowMs() - t0);
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
  const seconds = (nowMs() - started) / 1000;
  return { perSecond: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** Every request of the run by phase, for lining up with PostgreSQL's log. */
const timeline = new RequestTimeline();

function brokerPhase(url: string, amount: number, phase?: string): Promise<LoadResult> {
  return load({
    url,
    path: '/v1/sessions',
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' },
    body: createBody,
    connections: CONNECTIONS,
    amount,
    onResponse: phase ? (at, _status, latency) => timeline.add(phase, epochMs(at - latency), epochMs(at)) : undefined,
  });
}

function assertAllCreated(result: LoadResult, amount: number): void {
  if (result.errors > 0 || result.statuses['201'] !== amount) {
    throw new Error(`expected ${amount} × 201, got ${JSON.stringify(result.statuses)} and ${result.errors} errors`);
  }
}

async function sessionCount(url: string): Promise<number> {
  return withClient(
    url,
    async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE status = 'active'`)).rows[0].n,
  );
}

async function main(): Promise<void> {
  // Its own server and set-up, no broker running during its phases.
  if (process.argv.includes('--postgres-ab')) return postgresAb();
  const runStarted = Date.now();
  const db = await startDatabase('bench_sessions', {
    external: process.env.DATABASE_URL,
    settings: postgresLogSettings(SLOW_STATEMENT_MS),
  });
  const sim = await startSimulatorProcess();
  const brokerEnv = {
    SIM_SEED_NUMBERS: String(NUMBERS),
    SESSION_SWEEP_INTERVAL_MS: '3600000',
    BREAKER_HEALTH_INTERVAL_MS: '3600000',
    // The ladder's auth rung sends 1 500 wrong keys from one address: measured as 401s, not throttled to 429s.
    RATE_LIMIT_AUTH_FAILURES_PER_SECOND: '100000',
    RATE_LIMIT_AUTH_FAILURES_BURST: '1000000',
  };
  // --profile: the broker writes a V8 CPU profile into reports/ when it stops.
  const profile = process.argv.includes('--profile') ? ['--cpu-prof', '--cpu-prof-dir=reports/profiles'] : [];
  const broker = await startBrokerProcess(db.url, sim.url, brokerEnv, { nodeArgs: profile });
  let direct: DirectBroker | undefined;
  try {
    const accountId = await withClient(
      db.url,
      async (c) => (await c.query<{ account_id: string }>('SELECT account_id FROM api_keys LIMIT 1')).rows[0].account_id,
    );

    const againstDir = process.argv.find((a) => a.startsWith('--against='))?.slice(10);
    if (againstDir) {
      const postmaster = await withClient(db.url, async (c) =>
        parentPid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid),
      );
      const figures = await against({
        databaseUrl: db.url,
        simUrl: sim.url,
        simPid: sim.child.pid!,
        env: brokerEnv,
        against: againstDir,
        headers: CREATE_HEADERS,
        body: createBody,
        warm: numberArg('warmup', 2000),
        rounds: numberArg('rounds', 6),
        amount: numberArg('amount', 1500),
        connections: CONNECTIONS,
        reset: () => resetSessions(db.url),
        postgresCpu: () => postgresCpuMs(postmaster),
        nodeArgs: profile,
        noProviderCall: process.argv.includes('--no-provider-call') ? { numbers: NUMBERS } : undefined,
      });
      const path = process.argv.includes('--no-provider-call') ? 'no provider call' : 'with the bind';
      console.log(JSON.stringify({ benchmark: 'sessions --against', path, ...figures, node: process.version, load: loadavg() }, null, 2));
      return;
    }

    if (process.argv.includes('--scaling')) {
      await resetSessions(db.url);
      assertAllCreated(await brokerPhase(broker.url, WARMUP), WARMUP);
      await resetSessions(db.url);
      const steps = (process.argv.find((a) => a.startsWith('--scaling-steps='))?.slice(16) ?? '1000,10000,200000').split(',').map(Number);
      const startedAt = new Date().toISOString();
      const load = loadavg();
      const scaling = await withClient(db.url, (client) =>
        candidateScaling({
          client,
          databaseUrl: db.url,
          accountId,
          steps,
          rounds: numberArg('rounds', 3),
          amount: numberArg('amount', 1500),
          creates: (amount) => brokerPhase(broker.url, amount),
        }),
      );
      console.log(
        JSON.stringify(
          {
            benchmark: 'sessions --scaling',
            scaling,
            startedAt,
            load: { before: load, after: loadavg() },
            postgres: db.describe,
            node: process.version,
          },
          null,
          2,
        ),
      );
      return;
    }

    // Warm-up: JIT, connection pools, plans.
    await resetSessions(db.url);
    assertAllCreated(await brokerPhase(broker.url, WARMUP), WARMUP);
    const probeSize = await calibrateProbe();

    const bursts = (rate: number, brokers: Array<{ name: string; url: string }>) =>
      quietBursts({
        brokers,
        headers: CREATE_HEADERS,
        body: createBody,
        rate,
        seconds: BURST_SECONDS,
        quietsMs: QUIETS_MS,
        probeSize,
        onResult: (quietMs, r) => timeline.add(`burstAfter${quietMs / 1000}sQuiet`, epochMs(r.sentAt), epochMs(r.endedAt)),
      });
    if (process.argv.includes('--quiet')) {
      // The same build with node-postgres' default idle timeout (10 s): the pool as it was before.
      const dropping = await startBrokerProcess(db.url, sim.url, { ...brokerEnv, DATABASE_POOL_IDLE_TIMEOUT_MS: '10000' });
      let figures: BurstFigures[];
      try {
        assertAllCreated(await brokerPhase(dropping.url, WARMUP), WARMUP);
        figures = await bursts(numberArg('rate', 100), [
          { name: 'keeps connections', url: broker.url },
          { name: 'closes idle connections after 10 s', url: dropping.url },
        ]);
      } finally {
        await dropping.stop();
      }
      console.log(
        JSON.stringify(
          {
            benchmark: 'sessions --quiet',
            bursts: figures,
            quiet30sVs1sFirstSecondP99: {
              keepsConnections: quietRatio(figures, 'keeps connections', 30_000, 1000),
              closesIdleConnections: quietRatio(figures, 'closes idle connections after 10 s', 30_000, 1000),
            },
            connectionCost: await connectionCost(db.url, accountId),
            postgres: db.describe,
            node: process.version,
          },
          null,
          2,
        ),
      );
      return;
    }
    // The same build with a provider that keeps no sessions (Twilio, docs/design.md): a create that asks no vendor.
    direct = await startDirectBroker(db.url, sim.url, brokerEnv, NUMBERS, profile);
    const directBroker = direct.broker;
    assertAllCreated(await brokerPhase(directBroker.url, WARMUP), WARMUP);
    await sqlPhase(db.url, accountId, WARMUP);
    await sqlPhase(db.url, accountId, WARMUP, brokerStatements);
    await sqlPhase(db.url, accountId, WARMUP, brokerCreateStatement);

    const postmaster = await withClient(db.url, async (c) =>
      parentPid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid),
    );
    const meter = (pid = broker.child.pid!) =>
      cpuMeter({
        broker: () => processCpuMs(pid),
        simulator: () => processCpuMs(sim.child.pid!),
        postgres: () => postgresCpuMs(postmaster),
        loadGenerator: ownCpuMs,
      });
    const cpu: Record<'broker' | 'sql' | 'statements' | 'createStatement' | 'noProviderCall', Array<Record<string, number>>> = {
      broker: [],
      sql: [],
      statements: [],
      createStatement: [],
      noProviderCall: [],
    };
    const sql: Phase[] = [];
    const statements: Phase[] = [];
    const createStatement: Phase[] = [];
    const http: Phase[] = [];
    const noCall: Phase[] = [];
    const seen: Array<{ report: ReturnType<typeof phaseReport>; meanMs: number }> = [];
    const seenNoCall: Array<ReturnType<typeof phaseReport>> = [];
    const vendorRequestsDuringCreates: number[] = [];
    /** A phase of SQL sent straight from this process: its rate, and each process's CPU per allocation. */
    const sqlContender = (name: string, phases: Phase[], cpuOf: Array<Record<string, number>>, allocate: Allocation) => async () => {
      await resetSessions(db.url);
      const used = meter();
      phases.push(await sqlPhase(db.url, accountId, AMOUNT, allocate));
      cpuOf.push(used(AMOUNT));
      if ((await sessionCount(db.url)) !== AMOUNT) throw new Error(`${name} phase: session count mismatch`);
    };
    const contenders: Array<() => Promise<void>> = [
      sqlContender('SQL', sql, cpu.sql, minimalAllocation),
      sqlContender('broker-statements', statements, cpu.statements, brokerStatements),
      sqlContender('broker-create-statement', createStatement, cpu.createStatement, brokerCreateStatement),
      async () => {
        await resetSessions(db.url);
        const before = await scrape(broker.url);
        const used = meter();
        const result = await brokerPhase(broker.url, AMOUNT, 'broker');
        cpu.broker.push(used(AMOUNT));
        seen.push({ report: phaseReport(before, await scrape(broker.url), AMOUNT), meanMs: mean(result.latencies) });
        assertAllCreated(result, AMOUNT);
        if ((await sessionCount(db.url)) !== AMOUNT) throw new Error('broker phase: session count mismatch');
        const rule = await checkPoolRule(db.url);
        if (rule.violations || rule.unguarded) throw new Error(`pool rule broken: ${JSON.stringify(rule)}`);
        http.push(result);
      },
      async () => {
        await resetSessions(db.url);
        const before = await scrape(directBroker.url);
        const vendorBefore = direct!.vendorRequests();
        const used = meter(directBroker.child.pid!);
        const result = await brokerPhase(directBroker.url, AMOUNT, 'brokerNoProviderCall');
        cpu.noProviderCall.push(used(AMOUNT));
        vendorRequestsDuringCreates.push(direct!.vendorRequests() - vendorBefore);
        if (vendorRequestsDuringCreates.at(-1)! > 0) throw new Error('a create on a provider without sessions sent a vendor request');
        seenNoCall.push(phaseReport(before, await scrape(directBroker.url), AMOUNT));
        assertAllCreated(result, AMOUNT);
        if ((await sessionCount(db.url)) !== AMOUNT) throw new Error('no-provider-call phase: session count mismatch');
        const rule = await checkPoolRule(db.url);
        if (rule.violations || rule.unguarded) throw new Error(`pool rule broken: ${JSON.stringify(rule)}`);
        noCall.push(result);
      },
    ];
    // The order rotates each round, so no contender always runs first or last.
    for (let i = 0; i < ROUNDS; i++) {
      for (let j = 0; j < contenders.length; j++) await contenders[(i + j) % contenders.length]();
    }

    const brokerMax = median(http.map((p) => p.perSecond));
    const sqlMax = median(sql.map((p) => p.perSecond));
    const statementsMax = median(statements.map((p) => p.perSecond));
    const noCallMax = median(noCall.map((p) => p.perSecond));
    const cpuMedian = (phase: keyof typeof cpu) =>
      Object.fromEntries(Object.keys(cpu[phase][0]).map((name) => [name, round(median(cpu[phase].map((c) => c[name])), 3)]));
    // What no broker can go below here: bare HTTP, a bind straight to the simulator, the minimal SQL.
    const proxyNumbers = await withClient(db.url, async (c) =>
      (await c.query<{ number: string }>(`SELECT number FROM proxy_numbers WHERE provider = 'primary' ORDER BY number`)).rows.map(
        (r) => r.number,
      ),
    );
    const floor = await floors({
      connections: CONNECTIONS,
      amount: AMOUNT,
      createBody,
      simUrl: sim.url,
      simPid: sim.child.pid!,
      provider: 'primary',
      proxyNumbers,
      freshPair,
      sqlCpu: { postgres: cpuMedian('sql').postgres, loadGenerator: cpuMedian('sql').loadGenerator },
      measured: { withBind: ratio(brokerMax, sqlMax), noProviderCall: ratio(noCallMax, sqlMax) },
    });
    // Where a create's CPU goes before the reservation: requests stopping one step further each time.
    await resetSessions(db.url);
    const ladder = await createLadder({
      url: broker.url,
      connections: CONNECTIONS,
      amount: Math.min(AMOUNT, 1500),
      meter: () => meter(),
      createCpu: cpuMedian('broker'),
    });
    await resetSessions(db.url);
    const halfRate = Math.max(1, Math.round(brokerMax / 2));
    // Open loop, evenly spaced: the latency a client sees at half the capacity, not in bursts.
    const halfBefore = await scrape(broker.url);
    // What the rest of the machine used meanwhile (its busy CPU less the stack's four processes): a noisy run shows here.
    const halfStack = meter();
    const halfMachineBefore = machineBusyMs();
    const halfStarted = nowMs();
    const half = await paced({
      url: broker.url,
      path: '/v1/sessions',
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' },
      body: createBody,
      rate: halfRate,
      amount: Math.min(AMOUNT, halfRate * 20),
    });
    const halfSeconds = (nowMs() - halfStarted) / 1000;
    const halfStackMs = Object.values(halfStack(1)).reduce((sum, ms) => sum + ms, 0);
    const halfRestOfMachine = Math.max(0, machineBusyMs() - halfMachineBefore - halfStackMs) / halfSeconds;
    for (const r of half) timeline.add('halfMaxRate', epochMs(r.sentAt), epochMs(r.endedAt));
    const halfSeen = phaseReport(halfBefore, await scrape(broker.url), half.length);
    const quiet = await bursts(halfRate, [{ name: 'broker', url: broker.url }]);
    // The control: the machine alone after the same quiet spells, no request sent.
    const idle = await idleMachine(probeSize, [...new Set(QUIETS_MS)]);
    const postgresLog = db.server ? lineUp(await readServerLog(db.server.clusterDir), timeline, SLOW_STATEMENT_MS, runStarted) : null;
    const halfLatencies = half.map((r) => r.latencyMs);
    if (half.some((r) => r.status !== 201)) throw new Error('half-rate phase: a create did not answer 201');
    const brokerP99 = median(http.map((p) => p.p99));
    const halfP99 = percentile(halfLatencies, 99);
    const halfP50 = percentile(halfLatencies, 50);
    const quietRatio30 = quietRatio(quiet, 'broker', 30_000, 1000);
    // Each step's mean per create in each max-rate round; `rest` is HTTP, Nest, validation, auth, the response and queueing.
    const steps = seen.map(({ report, meanMs }) => {
      const s = report.createStepMeanMs as Record<string, number>;
      return {
        reserve: s.reserve ?? 0,
        bind: s.bind ?? 0,
        activate: s.activate ?? 0,
        rest: meanMs - (s.reserve ?? 0) - s.bind - (s.activate ?? 0),
        whole: meanMs,
      };
    });
    const stepNames = ['reserve', 'bind', 'activate', 'rest'] as const;
    const createShare = Object.fromEntries(
      stepNames.map((name) => [
        name,
        { meanMs: round(median(steps.map((s) => s[name])), 2), share: ratio(median(steps.map((s) => s[name] / s.whole)), 1) },
      ]),
    );
    const summary = (phases: Phase[]) => ({
      perSecond: round(median(phases.map((p) => p.perSecond))),
      p50Ms: round(median(phases.map((p) => p.p50)), 2),
      p99Ms: round(median(phases.map((p) => p.p99)), 2),
      rounds: phases.map((p) => round(p.perSecond)),
    });

    // The floor of the broker's own CPU per create (issue #34): a bare node:http 201 plus a thin client sending the
    // broker's statements (its own code on a bare pg client), each measured in this run. With the bind: the
    // reservation and the activation; without a provider call: the one create statement.
    const bareHttpMs = floor.cpuMsPerRequest.http.server;
    const cpuFloorMs = {
      withBind: round(bareHttpMs + cpuMedian('statements').loadGenerator, 3),
      noProviderCall: round(bareHttpMs + cpuMedian('createStatement').loadGenerator, 3),
    };
    const brokerCpuVsFloor = ratio(cpuMedian('broker').broker, cpuFloorMs.withBind);
    const noCallCpuVsFloor = ratio(cpuMedian('noProviderCall').broker, cpuFloorMs.noProviderCall);

    console.log(
      JSON.stringify(
        {
          benchmark: 'sessions',
          noProviderCallVsMinimalSql: ratio(noCallMax, sqlMax),
          brokerCpuVsFloor,
          brokerCpuVsFloorNoProviderCall: noCallCpuVsFloor,
          cpuFloorMsPerCreate: cpuFloorMs,
          connections: CONNECTIONS,
          sessionsPerPhase: AMOUNT,
          rounds: ROUNDS,
          proxyNumbersPerProvider: NUMBERS,
          broker: summary(http),
          sqlMinimal: summary(sql),
          brokerStatementsOnly: summary(statements),
          brokerCreateStatementOnly: summary(createStatement),
          ratio: ratio(brokerMax, sqlMax),
          // Each round's phases are adjacent in time: their ratio cancels the machine's slow drifts.
          ratioPerRound: http.map((p, i) => ratio(p.perSecond, sql[i].perSecond)),
          target: 0.5,
          targetMet: brokerMax / sqlMax >= 0.5,
          brokerVsItsOwnStatements: ratio(brokerMax, statementsMax),
          ownStatementsVsMinimal: ratio(statementsMax, sqlMax),
          // CPU ms per create by process, medians of rounds: on 2 shared cores this bounds the rate.
          cpuMsPerCreate: Object.fromEntries(
            (['broker', 'noProviderCall', 'sql', 'statements', 'createStatement'] as const).map((phase) => [
              {
                broker: 'broker',
                noProviderCall: 'brokerNoProviderCall',
                sql: 'sqlMinimal',
                statements: 'brokerStatementsOnly',
                createStatement: 'brokerCreateStatementOnly',
              }[phase],
              cpuMedian(phase),
            ]),
          ),
          createShare,
          floors: floor,
          createCpuLadder: ladder,
          // The same build on a provider that keeps no sessions (Twilio via Prism): reserve + activate, no vendor request.
          brokerNoProviderCall: {
            ...summary(noCall),
            vsSqlMinimal: ratio(noCallMax, sqlMax),
            ratioPerRound: noCall.map((p, i) => ratio(p.perSecond, sql[i].perSecond)),
            vsBrokerWithBind: ratio(noCallMax, brokerMax),
            vendorRequestsDuringCreates,
            seenByBroker: seenNoCall,
          },
          seenByBrokerAtMaxRate: seen.map((s) => s.report),
          halfMaxRate: {
            ratePerSecond: halfRate,
            creates: half.length,
            achievedPerSecond: round(half.length / halfSeconds),
            p50Ms: round(halfP50, 2),
            p99Ms: round(halfP99, 2),
            p99VsMaxRateP99: ratio(halfP99, brokerP99),
            p99VsOwnP50: ratio(halfP99, halfP50),
            restOfMachineCpuMsPerSecond: round(halfRestOfMachine),
            seenByBroker: halfSeen,
          },
          quietBursts: quiet,
          machineAfterQuietAlone: idle,
          quiet30sVs1sFirstSecondP99: quietRatio30,
          postgresLog,
          targets: {
            'halfRateP99 <= maxRateP99': halfP99 <= brokerP99,
            'halfRateP99 <= 5 x its p50': halfP99 <= 5 * halfP50,
            'burst after 30 s quiet: first-second p99 <= 2 x after 1 s': quietRatio30 <= 2,
            'broker >= 0.5 x minimal SQL': brokerMax / sqlMax >= 0.5,
            'broker without provider call >= 0.5 x minimal SQL': noCallMax / sqlMax >= 0.5,
            'broker CPU per create <= 2 x its floor': brokerCpuVsFloor <= 2,
            'broker CPU per create without a provider call <= 2 x its floor': noCallCpuVsFloor <= 2,
          },
          load: loadavg().map((l) => round(l, 2)),
          postgres: db.describe,
          node: process.version,
          cpus: cpus().length,
        },
        null,
        2,
      ),
    );
  } finally {
    await direct?.stop();
    await broker.stop();
    await sim.stop();
    await db.drop();
  }
}

runBench(main);
