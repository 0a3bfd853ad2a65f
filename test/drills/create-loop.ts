/**
 * Concurrent session creates for the fault drills: several workers creating (and sometimes closing)
 * sessions against one or more brokers until told to stop, recording every answer. Bounded: it stops
 * by itself after `maxRequests`.
 */
import { BENCH_API_KEY } from '../../bench/support/stack';

export interface CreateRecord {
  broker: string;
  status: number;
  /** problem+json `type` of an error answer. */
  problemType?: string;
  contentType?: string;
  id?: string;
  provider?: string;
  proxyNumber?: string;
  participants?: [string, string];
  /** A close was sent for it (set before it is sent); `closed`: it answered 200. */
  closing?: boolean;
  closed?: boolean;
  /** When the request was sent and how long its answer took, ms on `performance.now()`'s clock. */
  startedAt?: number;
  ms?: number;
}

export interface CreateLoopOptions {
  brokers: () => string[];
  workers: number;
  /** The participant pair of the next create. */
  pair: () => [string, string];
  maxRequests: number;
  /** Share of successful creates closed again right away (churn for the pool rule), 0..1. */
  closeShare?: number;
  timeoutMs?: number;
  pauseMs?: number;
}

export interface CreateLoop {
  records: CreateRecord[];
  created(): CreateRecord[];
  /** Resolves when `maxRequests` have been sent and answered. */
  finished: Promise<void>;
  stop(): Promise<void>;
  /** Resolves once `n` creates have answered 201. */
  createdAtLeast(n: number, attempts?: number): Promise<void>;
}

const headers = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };

export function startCreateLoop(options: CreateLoopOptions): CreateLoop {
  const records: CreateRecord[] = [];
  let stopped = false;
  let sent = 0;
  let closeTick = 0;
  const worker = async (index: number) => {
    while (!stopped && sent < options.maxRequests) {
      sent += 1;
      const brokers = options.brokers();
      const broker = brokers[(sent + index) % brokers.length];
      const participants = options.pair();
      const startedAt = performance.now();
      const record = await createOnce(broker, participants, options.timeoutMs ?? 10_000);
      record.startedAt = startedAt;
      record.ms = performance.now() - startedAt;
      records.push(record);
      if (record.status === 201 && options.closeShare && (closeTick += options.closeShare) >= 1) {
        closeTick -= 1;
        record.closing = true;
        record.closed = await closeOnce(broker, record.id!, options.timeoutMs ?? 10_000);
      }
      // A refused connection answers at once: do not spin while a broker is down.
      if (record.status === 0 || options.pauseMs) await new Promise((done) => setTimeout(done, options.pauseMs ?? 20));
    }
  };
  const running = Promise.all(Array.from({ length: options.workers }, (_, i) => worker(i))).then(() => undefined);
  const created = () => records.filter((r) => r.status === 201);
  return {
    records,
    created,
    finished: running,
    stop: async () => {
      stopped = true;
      await running;
    },
    createdAtLeast: async (n, attempts = 600) => {
      for (let i = 0; i < attempts; i++) {
        if (created().length >= n) return;
        await new Promise((done) => setTimeout(done, 50));
      }
      throw new Error(`only ${created().length} of ${n} creates answered 201`);
    },
  };
}

async function createOnce(broker: string, participants: [string, string], timeoutMs: number): Promise<CreateRecord> {
  try {
    const res = await fetch(`${broker}/v1/sessions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ channel: 'sms', participants: participants.map((number) => ({ number })) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const contentType = res.headers.get('content-type') ?? undefined;
    const body = (await res.json().catch(() => ({}))) as { id?: string; provider?: string; proxyNumber?: string; type?: string };
    if (res.status === 201) {
      return { broker, status: 201, contentType, id: body.id, provider: body.provider, proxyNumber: body.proxyNumber, participants };
    }
    return { broker, status: res.status, contentType, problemType: body.type, participants };
  } catch {
    return { broker, status: 0, participants };
  }
}

async function closeOnce(broker: string, id: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(`${broker}/v1/sessions/${id}`, { method: 'DELETE', headers, signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * The pool rule as the clients saw it: among sessions answered 201 and not closed, no participant is
 * on one proxy number (of one provider) twice. Returns the clashing keys.
 */
export function clientSideClashes(records: CreateRecord[]): string[] {
  const seen = new Set<string>();
  const clashes: string[] = [];
  for (const r of records) {
    if (r.status !== 201 || r.closed) continue;
    for (const number of r.participants!) {
      const key = `${r.provider}|${r.proxyNumber}|${number}`;
      if (seen.has(key)) clashes.push(key);
      seen.add(key);
    }
  }
  return clashes;
}

/** Participant pairs drawn from a small set of numbers, so concurrent creates overlap. */
export function overlappingPairs(size: number, seed = 1): () => [string, string] {
  let state = seed;
  const next = () => {
    // xorshift: deterministic, so a failing drill can be replayed.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % size;
  };
  return () => {
    const a = next();
    let b = next();
    if (b === a) b = (a + 1) % size;
    // Nigerian mobiles: the countries of the seeded pool are the ones an account may reach by default.
    return [`+234803${String(a).padStart(7, '0')}`, `+234803${String(b).padStart(7, '0')}`];
  };
}
