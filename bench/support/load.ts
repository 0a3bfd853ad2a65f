/**
 * HTTP load through autocannon, measured by us: autocannon generates the requests (keep-alive
 * connections, optional pacing); throughput and latency percentiles are computed here from each
 * response, the same way as for the SQL baselines, because autocannon only reports on whole-second
 * ticks (its duration is rounded up to the next tick).
 */
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { nowMs, percentile } from './stats';

export interface LoadOptions {
  url: string;
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A body per request (unique participants, say); omitted for GET. */
  body?: () => string;
  /** Headers per request added to `headers` (a fresh Idempotency-Key, say); only with `body`. */
  requestHeaders?: () => Record<string, string>;
  connections: number;
  /** Requests to complete; the run ends when they have. */
  amount?: number;
  /** Or a duration in seconds. */
  durationSeconds?: number;
  /** Requests per second over all connections; unset = as fast as the server answers. */
  overallRate?: number;
  /** Called with each response's arrival time (ms, performance clock), status and latency. */
  onResponse?: (at: number, status: number, latencyMs: number) => void;
  timeoutSeconds?: number;
}

export interface LoadResult {
  completed: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** Status code → count; `errors` are transport errors and timeouts. */
  statuses: Record<string, number>;
  errors: number;
  latencies: number[];
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let last = 0;
  const makeBody = options.body;
  const extraHeaders = options.requestHeaders;
  let instance!: autocannon.Instance;
  const finished = new Promise<autocannon.Result>((done, fail) => {
    instance = autocannon(
      {
        url: options.url + options.path,
        method: options.method ?? 'GET',
        headers: options.headers,
        connections: options.connections,
        // autocannon refuses keys present but undefined.
        ...(options.amount !== undefined && { amount: options.amount }),
        ...(options.durationSeconds !== undefined && { duration: options.durationSeconds }),
        ...(options.overallRate !== undefined && { overallRate: options.overallRate }),
        timeout: options.timeoutSeconds ?? 30,
        requests: makeBody
          ? [
              {
                setupRequest: (request) =>
                  extraHeaders
                    ? { ...request, body: makeBody(), headers: { ...request.headers, ...extraHeaders() } }
                    : { ...request, body: makeBody() },
              },
            ]
          : undefined,
      },
      (error, result) => (error ? fail(error instanceof Error ? error : new Error(String(error))) : done(result)),
    );
  });
  const started = nowMs();
  // autocannon emits (client, statusCode, resBytes, responseTime); its typings omit the client.
  instance.on('response', (...args: unknown[]) => {
    const [status, , latency] = args.slice(-3) as [number, number, number];
    const at = nowMs();
    last = at;
    latencies.push(latency);
    statuses[status] = (statuses[status] ?? 0) + 1;
    options.onResponse?.(at, status, latency);
  });
  const result = await finished;
  const seconds = (last - started) / 1000;
  return {
    completed: latencies.length,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    statuses,
    errors: result.errors + result.timeouts,
    latencies,
  };
}

export interface PacedOptions {
  url: string;
  path: string;
  method?: 'GET' | 'POST';
  /** The same headers on every request, or each request's own from its sequence number (0, 1, …). */
  headers?: Record<string, string> | ((seq: number) => Record<string, string>);
  body?: () => string;
  /** Requests per second, sent evenly spaced whatever the answers take (open loop). */
  rate: number;
  /** Requests to send; or `until` to stop sending. */
  amount?: number;
  until?: () => boolean;
  /** Per-request timeout, ms. */
  timeoutMs?: number;
  /** Called when each request ends: when it was sent and ended (ms, performance clock), its status (0: transport error) and body. */
  onResult?: (result: PacedResult) => void;
}

export interface PacedResult {
  /** The request's sequence number: it left at start + seq / rate. */
  seq: number;
  /** How late the request left (ms after start + seq / rate): the load generator's own delay. */
  lateMs: number;
  sentAt: number;
  endedAt: number;
  latencyMs: number;
  status: number;
  body: string;
}

/**
 * Open-loop load: request i leaves at start + i / rate, on a pool of keep-alive connections large
 * enough that a slow answer never delays the next send. autocannon's `overallRate` sends each
 * second's share in a burst at the start of the second, which measures bursts, not a steady rate.
 */
export async function paced(options: PacedOptions): Promise<PacedResult[]> {
  const pool = new Pool(new URL(options.url).origin, { connections: 256, keepAliveTimeout: 30_000 });
  const results: PacedResult[] = [];
  const inFlight = new Set<Promise<void>>();
  const interval = 1000 / options.rate;
  const started = nowMs();
  try {
    for (let i = 0; options.amount === undefined || i < options.amount; i++) {
      if (options.until?.()) break;
      const due = started + i * interval;
      const wait = due - nowMs();
      if (wait > 1) await new Promise((done) => setTimeout(done, wait));
      const one = send(pool, options, i, due).then((result) => {
        results.push(result);
        options.onResult?.(result);
      });
      inFlight.add(one);
      void one.finally(() => inFlight.delete(one));
    }
    await Promise.all(inFlight);
  } finally {
    await pool.close();
  }
  return results;
}

async function send(pool: Pool, options: PacedOptions, seq: number, due: number): Promise<PacedResult> {
  const sentAt = nowMs();
  const lateMs = Math.max(0, sentAt - due);
  try {
    const res = await pool.request({
      path: options.path,
      method: options.method ?? 'GET',
      headers: typeof options.headers === 'function' ? options.headers(seq) : options.headers,
      body: options.body?.(),
      headersTimeout: options.timeoutMs ?? 30_000,
      bodyTimeout: options.timeoutMs ?? 30_000,
    });
    const body = await res.body.text();
    const endedAt = nowMs();
    return { seq, lateMs, sentAt, endedAt, latencyMs: endedAt - sentAt, status: res.statusCode, body };
  } catch (error) {
    const endedAt = nowMs();
    return {
      seq,
      lateMs,
      sentAt,
      endedAt,
      latencyMs: endedAt - sentAt,
      status: 0,
      body: error instanceof Error ? error.message : String(error),
    };
  }
}
