/**
 * Loaded into a broker with `node --require dist/bench/bench/support/tail-sampler.js` (bench/support/tail-probe.ts
 * does it): records, with epoch-ms timestamps, what a slow request could have waited on, and writes it all
 * to `TAIL_SAMPLER_FILE` when the process exits. Nothing of the broker's code changes.
 *
 *   gaps      a 1 ms interval timer that fired late by more than `TAIL_GAP_MS` (5): the event loop was busy
 *             or the process was not running (start of the gap, its length)
 *   gc        every collection (perf_hooks): start, duration, kind
 *   requests  each HTTP request: its `x-tail-seq` header, arrival (the server's `request` event), finish
 *             (the response's `finish`), and within it (AsyncLocalStorage): waits for a pooled database
 *             connection, each SQL statement, each outgoing undici request (the provider's bind)
 *   queries   every SQL statement sent outside a request (periodic jobs): start, end, its first 60 characters
 *
 * The timer and the bookkeeping cost the broker some CPU; compare runs made with it, not against runs without.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import { Server } from 'node:http';
import { PerformanceObserver, performance } from 'node:perf_hooks';

/* eslint-disable @typescript-eslint/no-require-imports -- patched where the broker loads them */
const pg = require('pg') as typeof import('pg');
const undici = require('undici') as typeof import('undici');
/* eslint-enable @typescript-eslint/no-require-imports */

const epoch = (): number => performance.timeOrigin + performance.now();
const round = (x: number): number => Math.round(x * 100) / 100;
const GAP_MS = Number(process.env.TAIL_GAP_MS ?? 5);
/** `TAIL_SAMPLER=gc`: only the collections (no timer, nothing patched), to see the broker as it runs without the rest. */
const GC_ONLY = process.env.TAIL_SAMPLER === 'gc';

interface Step {
  kind: 'poolWait' | 'sql' | 'http';
  start: number;
  ms: number;
  what: string;
}
interface RequestRecord {
  seq: string;
  url: string;
  arrival: number;
  finish?: number;
  steps: Step[];
}

const store = new AsyncLocalStorage<RequestRecord>();
const gaps: Array<[number, number]> = [];
const gc: Array<[number, number, number]> = [];
const requests: RequestRecord[] = [];
const queries: Array<[number, number, string]> = [];

function note(kind: Step['kind'], start: number, what: string): void {
  const end = epoch();
  const request = store.getStore();
  if (request) request.steps.push({ kind, start: round(start), ms: round(end - start), what });
  else if (kind === 'sql') queries.push([round(start), round(end - start), what]);
}

let last = performance.now();
if (!GC_ONLY)
  setInterval(() => {
    const now = performance.now();
    if (now - last > GAP_MS) gaps.push([round(performance.timeOrigin + last), round(now - last)]);
    last = now;
  }, 1).unref();

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
    gc.push([round(performance.timeOrigin + entry.startTime), round(entry.duration), kind]);
  }
}).observe({ entryTypes: ['gc'] });

if (!GC_ONLY) patch();

function patch(): void {
  const emit = Server.prototype.emit as (this: Server, event: string, ...args: unknown[]) => boolean;
  Server.prototype.emit = function (this: Server, event: string, ...args: unknown[]): boolean {
    if (event !== 'request') return emit.call(this, event, ...args);
    const [req, res] = args as [import('node:http').IncomingMessage, import('node:http').ServerResponse];
    const record: RequestRecord = { seq: String(req.headers['x-tail-seq'] ?? ''), url: req.url ?? '', arrival: round(epoch()), steps: [] };
    requests.push(record);
    res.once('finish', () => (record.finish = round(epoch())));
    return store.run(record, () => emit.call(this, event, ...args));
  } as typeof Server.prototype.emit;

  const sqlText = (query: unknown): string => {
    const text =
      typeof query === 'string' ? query : ((query as { text?: string; name?: string })?.name ?? (query as { text?: string })?.text ?? '');
    return text.replace(/\s+/g, ' ').trim().slice(0, 60);
  };

  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]): unknown {
    const start = epoch();
    const what = sqlText(args[0]);
    const callbackAt = args.findIndex((a) => typeof a === 'function');
    if (callbackAt >= 0) {
      const callback = args[callbackAt] as (...r: unknown[]) => void;
      args[callbackAt] = (...r: unknown[]) => {
        note('sql', start, what);
        callback(...r);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function')
      (result as Promise<unknown>).then(
        () => note('sql', start, what),
        () => note('sql', start, what),
      );
    return result;
  } as typeof pg.Client.prototype.query;

  const connect = pg.Pool.prototype.connect as (...args: unknown[]) => unknown;
  pg.Pool.prototype.connect = function (this: unknown, ...args: unknown[]): unknown {
    const start = epoch();
    if (typeof args[0] === 'function') {
      const callback = args[0] as (...r: unknown[]) => void;
      return connect.call(this, (...r: unknown[]) => {
        note('poolWait', start, 'connect');
        callback(...r);
      });
    }
    const result = connect.apply(this, args) as Promise<unknown>;
    void result.then(
      () => note('poolWait', start, 'connect'),
      () => note('poolWait', start, 'connect'),
    );
    return result;
  } as typeof pg.Pool.prototype.connect;

  const request = undici.Dispatcher.prototype.request as (...args: unknown[]) => unknown;
  undici.Dispatcher.prototype.request = function (this: unknown, ...args: unknown[]): unknown {
    const start = epoch();
    const what = String((args[0] as { path?: string })?.path ?? '').slice(0, 60);
    const result = request.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function')
      (result as Promise<unknown>).then(
        () => note('http', start, what),
        () => note('http', start, what),
      );
    return result;
  } as typeof undici.Dispatcher.prototype.request;
}

let written = false;
function write(): void {
  const file = process.env.TAIL_SAMPLER_FILE;
  if (file && !written) writeFileSync(file, JSON.stringify({ gaps, gc, requests, queries }));
  written = true;
}
process.on('exit', write);
// A process with no SIGTERM handler of its own (the simulator) dies of the signal without an `exit` event: write, then die of it.
process.on('SIGTERM', function onTerm() {
  if (process.listenerCount('SIGTERM') > 1) return;
  write();
  process.removeListener('SIGTERM', onTerm);
  process.kill(process.pid, 'SIGTERM');
});
