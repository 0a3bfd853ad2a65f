/**
 * Session creates at a steady rate through primary outages, with shortened breaker durations.
 *
 * The built broker (`dist/apps/broker/src/main.js`) and the simulator run as processes of their own
 * on a throwaway PostgreSQL; creates are sent open loop, evenly spaced (a slow answer never delays the
 * next send), each with a fresh participant pair. Breaker transitions are read live from
 * `GET /v1/health/cpaas/stream`.
 *
 * Outage A (the one the issue describes): primary `down` until the breaker is OPEN and a while after,
 * then `timeout`, then back to `ok` until the breaker is CLOSED again. Outage B: `timeout` straight
 * from CLOSED, then `ok` until CLOSED: the case where creates can pay the provider timeout.
 *
 * The steady rate is a share (`--load-share`, 0.25) of the create capacity measured at the start of the
 * same run, so that on a busy machine creates do not queue behind each other (or `--rate=N`).
 *
 * Reported: failed creates (target 0); creates that paid the provider timeout (binds on the primary
 * that ended in a timeout, from the broker's `cpaas_provider_calls_total`; target at most
 * BREAKER_CONSECUTIVE_FAILURES); time to OPEN (also as a
 * multiple of the time the steady rate takes to send BREAKER_CONSECUTIVE_FAILURES creates); time back to
 * CLOSED (also as a multiple of the configured minimum: HALF_OPEN_AFTER_PASSES health intervals plus
 * CLOSE_AFTER_MS); p99 before, during and after, the comparable figures being ratios to the p99 before.
 * Prints one JSON object.
 * Usage: npm run bench:failover [-- --load-share=0.25 | --rate=N] [--timeout-ms=1000]
 */
import { cpus } from 'node:os';
import { load, paced, type PacedResult } from '../support/load';
import { checkPoolRule } from '../support/pool-rule';
import { BENCH_API_KEY, setFault, sleep, startBrokerProcess, startDatabase, startSimulatorProcess } from '../support/stack';
import { nowMs, numberArg, percentile, ratio, round } from '../support/stats';
import { runBench } from '../support/started';

/** Steady rate as a share of the capacity measured at the start of the run (or `--rate` creates/s). */
const LOAD_SHARE = numberArg('load-share', 0.25);
const FIXED_RATE = numberArg('rate', 0);
const TIMEOUT_MS = numberArg('timeout-ms', 1000);
const CONSECUTIVE = numberArg('consecutive-failures', 5);
const HEALTH_INTERVAL_MS = numberArg('health-interval-ms', 200);
const HALF_OPEN_AFTER_PASSES = 5;
const CLOSE_AFTER_MS = numberArg('close-after-ms', 2000);
const STEADY_MS = numberArg('steady-ms', 8000);

interface Transition {
  at: number;
  provider: string;
  from: string;
  to: string;
}

/** Follows the broker's SSE stream, keeping each transition with its arrival time. */
function followTransitions(url: string): { transitions: Transition[]; close(): void } {
  const transitions: Transition[] = [];
  const controller = new AbortController();
  void (async () => {
    const res = await fetch(`${url}/v1/health/cpaas/stream`, { signal: controller.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!/^event: transition$/m.test(block)) continue;
        const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]) as { provider: string; from: string; to: string };
        transitions.push({ at: nowMs(), provider: data.provider, from: data.from, to: data.to });
      }
    }
  })().catch(() => undefined);
  return { transitions, close: () => controller.abort() };
}

/** Binds on the primary that ended in a provider timeout, from the broker's own counter. */
async function primaryBindTimeouts(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('cpaas_provider_calls_total{') &&
        l.includes('provider="primary"') &&
        l.includes('operation="bind"') &&
        l.includes('outcome="timeout"'),
    );
  return line ? Number(line.split(' ').pop()) : 0;
}

/**
 * Nigerian mobiles (+234 803…), the pool's country, as the other benches use: the UK 800 numbers this sent
 * before are refused as special-rate (422) since the destination guard, so no create reached a provider
 * and the primary never opened.
 */
let participantSeq = 0;
function createBody(): string {
  participantSeq += 1;
  const n = participantSeq * 2;
  const number = (i: number) => `+234803${String(i).padStart(7, '0')}`;
  return JSON.stringify({ channel: 'sms', participants: [{ number: number(n) }, { number: number(n + 1) }] });
}

async function until(what: string, check: () => boolean, limitMs = 120_000): Promise<void> {
  for (let i = 0; i < limitMs / 20; i++) {
    if (check()) return;
    await sleep(20);
  }
  throw new Error(`${what}: not seen in time`);
}

function stats(results: PacedResult[]) {
  const latencies = results.map((r) => r.latencyMs);
  const providers: Record<string, number> = {};
  for (const r of results) {
    const provider = r.status === 201 ? (JSON.parse(r.body) as { provider: string }).provider : `status ${r.status}`;
    providers[provider] = (providers[provider] ?? 0) + 1;
  }
  return { creates: results.length, p50Ms: round(percentile(latencies, 50), 1), p99Ms: round(percentile(latencies, 99), 1), providers };
}

async function main(): Promise<void> {
  const db = await startDatabase('bench_failover', { external: process.env.DATABASE_URL });
  const sim = await startSimulatorProcess();
  const env = {
    SIM_SEED_NUMBERS: '100',
    PROVIDER_CALL_TIMEOUT_MS: String(TIMEOUT_MS),
    BREAKER_CONSECUTIVE_FAILURES: String(CONSECUTIVE),
    BREAKER_HEALTH_INTERVAL_MS: String(HEALTH_INTERVAL_MS),
    BREAKER_HALF_OPEN_AFTER_PASSES: String(HALF_OPEN_AFTER_PASSES),
    BREAKER_CLOSE_AFTER_MS: String(CLOSE_AFTER_MS),
    SESSION_SWEEP_INTERVAL_MS: '3600000',
  };
  const broker = await startBrokerProcess(db.url, sim.url, env);
  const stream = followTransitions(broker.url);
  const primary = (to: string, after: number) => () =>
    stream.transitions.some((t) => t.provider === 'primary' && t.to === to && t.at > after);
  const results: PacedResult[] = [];
  let stop = false;
  try {
    // Capacity now, on this machine: the steady rate is a fixed share of it, so creates do not queue.
    const capacity = await load({
      url: broker.url,
      path: '/v1/sessions',
      method: 'POST',
      headers: headers(),
      body: createBody,
      connections: 8,
      amount: 400,
    });
    const rate = FIXED_RATE || Math.max(5, Math.round(capacity.perSecond * LOAD_SHARE));
    // Warm-up at that rate, not counted.
    await paced({
      url: broker.url,
      path: '/v1/sessions',
      method: 'POST',
      headers: headers(),
      body: createBody,
      rate: rate,
      amount: rate * 2,
    });
    const sending = paced({
      url: broker.url,
      path: '/v1/sessions',
      method: 'POST',
      headers: headers(),
      body: createBody,
      rate: rate,
      until: () => stop,
      timeoutMs: 30_000,
      onResult: (r) => results.push(r),
    });
    const t0 = nowMs();
    await sleep(STEADY_MS);

    // Outage A: down, then timeout while OPEN, then ok until CLOSED.
    const aTimeouts = await primaryBindTimeouts(broker.url);
    const aDown = nowMs();
    await setFault(sim.url, 'primary', { mode: 'down' });
    await until('OPEN after down', primary('OPEN', aDown));
    const aOpen = stream.transitions.find((t) => t.provider === 'primary' && t.to === 'OPEN' && t.at > aDown)!.at;
    await sleep(STEADY_MS / 2);
    await setFault(sim.url, 'primary', { mode: 'timeout' });
    await sleep(STEADY_MS / 2);
    const aOk = nowMs();
    await setFault(sim.url, 'primary', { mode: 'ok' });
    await until('CLOSED after outage A', primary('CLOSED', aOk));
    const aClosed = stream.transitions.find((t) => t.provider === 'primary' && t.to === 'CLOSED' && t.at > aOk)!.at;
    const aPaid = (await primaryBindTimeouts(broker.url)) - aTimeouts;
    await sleep(STEADY_MS);

    // Outage B: timeout straight from CLOSED, then ok until CLOSED.
    const bTimeouts = await primaryBindTimeouts(broker.url);
    const bTimeout = nowMs();
    await setFault(sim.url, 'primary', { mode: 'timeout' });
    await until('OPEN after timeout', primary('OPEN', bTimeout));
    const bOpen = stream.transitions.find((t) => t.provider === 'primary' && t.to === 'OPEN' && t.at > bTimeout)!.at;
    await sleep(STEADY_MS / 2);
    const bOk = nowMs();
    await setFault(sim.url, 'primary', { mode: 'ok' });
    await until('CLOSED after outage B', primary('CLOSED', bOk));
    const bClosed = stream.transitions.find((t) => t.provider === 'primary' && t.to === 'CLOSED' && t.at > bOk)!.at;
    const bPaid = (await primaryBindTimeouts(broker.url)) - bTimeouts;
    await sleep(STEADY_MS);
    stop = true;
    await sending;

    const sentIn = (from: number, to: number) => results.filter((r) => r.sentAt >= from && r.sentAt < to);
    const before = stats(sentIn(t0, aDown));
    const duringA = sentIn(aDown, aClosed);
    const afterA = stats(sentIn(aClosed, bTimeout));
    const duringB = sentIn(bTimeout, bClosed);
    const afterB = stats(sentIn(bClosed, Infinity));
    const slowerThanTimeout = (rs: PacedResult[]) => rs.filter((r) => r.latencyMs >= TIMEOUT_MS).length;
    const failed = results.filter((r) => r.status !== 201).length;
    const minClose = HALF_OPEN_AFTER_PASSES * HEALTH_INTERVAL_MS + CLOSE_AFTER_MS;
    const timeForConsecutive = (CONSECUTIVE / rate) * 1000;
    const rule = await checkPoolRule(db.url);
    const outage = (
      paid: number,
      during: PacedResult[],
      after: ReturnType<typeof stats>,
      start: number,
      open: number,
      ok: number,
      closed: number,
    ) => ({
      paidProviderTimeout: paid,
      answeredSlowerThanTimeout: slowerThanTimeout(during),
      paidProviderTimeoutTarget: CONSECUTIVE,
      timeToOpenMs: round(open - start),
      timeToOpenVsTimeForConsecutiveFailures: ratio(open - start, timeForConsecutive),
      timeBackToClosedMs: round(closed - ok),
      timeBackToClosedVsConfiguredMinimum: ratio(closed - ok, minClose),
      during: stats(during),
      after,
      p99DuringVsBefore: ratio(
        percentile(
          during.map((r) => r.latencyMs),
          99,
        ),
        before.p99Ms,
      ),
      p99AfterVsBefore: ratio(after.p99Ms, before.p99Ms),
    });
    console.log(
      JSON.stringify(
        {
          benchmark: 'failover',
          capacityCreatesPerSecond: round(capacity.perSecond),
          ratePerSecond: rate,
          settings: env,
          creates: results.length,
          failedCreates: failed,
          failedCreatesTarget: 0,
          before,
          outageA_downThenTimeoutThenOk: outage(aPaid, duringA, afterA, aDown, aOpen, aOk, aClosed),
          outageB_timeoutFromClosed: outage(bPaid, duringB, afterB, bTimeout, bOpen, bOk, bClosed),
          expectedTimeoutPayersAtThisRate: round((rate * TIMEOUT_MS) / 1000),
          primaryTransitions: stream.transitions.filter((t) => t.provider === 'primary').map((t) => `${t.from}>${t.to}`),
          poolRule: rule,
          targetsMet: {
            failedCreates: failed === 0,
            paidTimeoutA: aPaid <= CONSECUTIVE,
            paidTimeoutB: bPaid <= CONSECUTIVE,
          },
          postgres: db.describe,
          node: process.version,
          cpus: cpus().length,
        },
        null,
        2,
      ),
    );
  } finally {
    stop = true;
    stream.close();
    await broker.stop();
    await sim.stop();
    await db.drop();
  }
}

function headers(): Record<string, string> {
  return { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };
}

runBench(main);
