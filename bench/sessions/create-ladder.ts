/**
 * Where a create's cost goes before the reservation, measured as a ladder of requests that each stop one
 * step further along the same path, on the same broker, in the same run: the CPU each process spends
 * per request (from /proc) at the same concurrency. Differences between rungs are each step's cost:
 *
 *   http          GET /health (liveness): the HTTP server, Express, Nest's router and the request log middleware, a constant answer
 *   auth          POST /v1/sessions with an unknown API key: + body parsing, the API-key guard, a 401 problem
 *   validation    the right key, a body that fails validation: + the rate limiter, the DTO's validation, a 400 problem
 *   destinations  a valid body whose participants the account may not reach: + the destination check (one
 *                 query), a 422 problem
 *   create        a create answered 201 (from the max-rate phases): + reservation, bind, activation and outbox, the 201
 */
import { load } from '../support/load';
import { BENCH_API_KEY } from '../support/stack';
import { round } from '../support/stats';

export type Meter = (amount: number) => Record<string, number>;

interface Rung {
  name: 'http' | 'auth' | 'validation' | 'destinations';
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: () => string;
  status: number;
}

const JSON_TYPE = { 'content-type': 'application/json' };
/** Valid UK mobiles: the bench account reaches only the pool's country (Nigeria), so the destination check refuses them. */
let seq = 0;
const outOfCountry = () => {
  seq += 2;
  return JSON.stringify({
    channel: 'sms',
    participants: [{ number: `+4477009${String(seq).padStart(5, '0')}` }, { number: `+4477009${String(seq + 1).padStart(5, '0')}` }],
  });
};

const RUNGS: Rung[] = [
  { name: 'http', path: '/health', method: 'GET', headers: {}, status: 200 },
  {
    name: 'auth',
    path: '/v1/sessions',
    method: 'POST',
    headers: { ...JSON_TYPE, authorization: 'Bearer not-a-key-of-this-broker-000000' },
    body: outOfCountry,
    status: 401,
  },
  {
    name: 'validation',
    path: '/v1/sessions',
    method: 'POST',
    headers: { ...JSON_TYPE, authorization: `Bearer ${BENCH_API_KEY}` },
    body: () => JSON.stringify({ channel: 'sms', participants: [{ number: 'not a number' }] }),
    status: 400,
  },
  {
    name: 'destinations',
    path: '/v1/sessions',
    method: 'POST',
    headers: { ...JSON_TYPE, authorization: `Bearer ${BENCH_API_KEY}` },
    body: outOfCountry,
    status: 422,
  },
];

export async function createLadder(options: {
  url: string;
  connections: number;
  amount: number;
  meter: () => Meter;
  /** CPU per create answered 201 by process, from the max-rate phases. */
  createCpu: Record<string, number>;
}) {
  const rungs: Array<{ name: string; perSecond: number; cpuMsPerRequest: Record<string, number>; answered?: number }> = [];
  for (const rung of RUNGS) {
    const used = options.meter();
    const result = await load({
      url: options.url,
      path: rung.path,
      method: rung.method,
      headers: rung.headers,
      body: rung.body,
      connections: options.connections,
      amount: options.amount,
    });
    // A refused request may end its connection before every request was answered (autocannon then
    // counts fewer answers): CPU is per answer, and every answer must be the rung's.
    const answered = result.statuses[rung.status] ?? 0;
    const cpu = used(answered);
    if (answered !== result.completed || answered < options.amount / 2) {
      throw new Error(`ladder rung ${rung.name}: expected ${options.amount} × ${rung.status}, got ${JSON.stringify(result.statuses)}`);
    }
    rungs.push({ name: rung.name, perSecond: round(result.perSecond), cpuMsPerRequest: cpu, answered });
  }
  rungs.push({ name: 'create', perSecond: NaN, cpuMsPerRequest: options.createCpu });
  // Each step's share of a create's CPU, as the difference between adjacent rungs.
  // The server side only: broker, simulator, PostgreSQL (the load generator is the client).
  const total = (cpu: Record<string, number>) => Object.entries(cpu).reduce((a, [k, v]) => (k === 'loadGenerator' ? a : a + v), 0);
  const createTotal = total(options.createCpu);
  const steps: Record<string, { brokerMs: number; postgresMs: number; allMs: number; shareOfCreate: number }> = {};
  let previous: Record<string, number> | undefined;
  for (const rung of rungs) {
    const cpu = rung.cpuMsPerRequest;
    const minus = (key: string) => (cpu[key] ?? 0) - (previous?.[key] ?? 0);
    const all = total(cpu) - (previous ? total(previous) : 0);
    const name = rung.name === 'create' ? 'reserve+bind+activate+201' : rung.name;
    steps[name] = {
      brokerMs: round(minus('broker'), 3),
      postgresMs: round(minus('postgres'), 3),
      allMs: round(all, 3),
      shareOfCreate: round(all / createTotal, 3),
    };
    previous = cpu;
  }
  return {
    how: 'requests that stop one step further along the create path, same broker, same connections; CPU per request from /proc (broker, simulator, PostgreSQL); a step = the difference to the rung before',
    rungs: rungs.filter((r) => r.name !== 'create'),
    steps,
  };
}
