/**
 * PostgreSQL's own account of a run, lined up with the requests: the bench's server logs every
 * statement slower than a threshold (`log_min_duration_statement`), every checkpoint
 * (`log_checkpoints`) and every autovacuum run (`log_autovacuum_min_duration=0`), each line stamped with
 * the Unix time in ms (`log_line_prefix=%n`). After the run the log is read back and each phase's
 * slowest requests (at or over the phase's p99) are matched against the slow statements and
 * checkpoints whose time overlapped theirs: a stall the database caused shows up as overlaps, one it
 * did not as none.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { percentile, round } from './stats';

/** Settings for `startDatabase(..., { settings })`. */
export function postgresLogSettings(slowStatementMs: number): Record<string, string> {
  return {
    log_min_duration_statement: String(slowStatementMs),
    log_checkpoints: 'on',
    log_autovacuum_min_duration: '0',
    log_line_prefix: '%n [%p] ',
  };
}

export async function readServerLog(clusterDir: string): Promise<string> {
  return readFile(join(clusterDir, 'server.log'), 'utf8').catch(() => '');
}

interface Interval {
  startMs: number;
  endMs: number;
}

interface SlowStatement extends Interval {
  durationMs: number;
  statement: string;
}

interface Checkpoint extends Interval {
  reason: string;
  detail: string;
}

interface Autovacuum {
  /** When it was logged: its end. */
  atMs: number;
  /** Its elapsed time from the log's `system usage` line; NaN when missing. */
  elapsedMs: number;
  detail: string;
}

/** Lines carrying the prefix start an entry; lines without it continue the previous one (a multi-line statement). */
function parseServerLog(text: string): { statements: SlowStatement[]; checkpoints: Checkpoint[]; autovacuums: Autovacuum[] } {
  const entries: Array<{ atMs: number; message: string }> = [];
  for (const line of text.split('\n')) {
    const m = /^(\d{10,}\.\d{3}) \[\d+\] (.*)$/.exec(line);
    if (m) entries.push({ atMs: Number(m[1]) * 1000, message: m[2] });
    else if (entries.length > 0) entries[entries.length - 1].message += ` ${line.trim()}`;
  }
  const statements: SlowStatement[] = [];
  const checkpoints: Checkpoint[] = [];
  const autovacuums: Autovacuum[] = [];
  let checkpointStart: { atMs: number; reason: string } | undefined;
  for (const { atMs, message } of entries) {
    const duration = /^LOG: {2}duration: ([\d.]+) ms {2}(?:statement|execute [^:]*|bind [^:]*|parse [^:]*): (.*)$/.exec(message);
    if (duration) {
      const durationMs = Number(duration[1]);
      statements.push({ startMs: atMs - durationMs, endMs: atMs, durationMs, statement: statementClass(duration[2]) });
      continue;
    }
    const started = /^LOG: {2}checkpoint starting: (.*)$/.exec(message);
    if (started) {
      checkpointStart = { atMs, reason: started[1].trim() };
      continue;
    }
    const complete = /^LOG: {2}checkpoint complete: (.*)$/.exec(message);
    if (complete) {
      checkpoints.push({
        startMs: checkpointStart?.atMs ?? atMs,
        endMs: atMs,
        reason: checkpointStart?.reason ?? 'unknown',
        detail: complete[1].replace(/;.*$/, '').trim(),
      });
      checkpointStart = undefined;
      continue;
    }
    if (/^LOG: {2}automatic (vacuum|analyze)/.test(message))
      autovacuums.push({ atMs, elapsedMs: Number(/elapsed: ([\d.]+) s/.exec(message)?.[1] ?? NaN) * 1000, detail: message.slice(5, 120) });
  }
  return { statements, checkpoints, autovacuums };
}

/** The name in a leading comment (`/* session.reserve *\/`, as the broker tags its statements), else verb and table. */
export function statementClass(sql: string): string {
  const text = sql.trim();
  const named = /^\/\*\s*([\w.-]+)\s*\*\//.exec(text);
  if (named) return named[1];
  const verb = /^(WITH|SELECT|INSERT INTO|UPDATE|DELETE FROM|BEGIN|COMMIT|START TRANSACTION|LISTEN|NOTIFY)\b\s*([\w."]+)?/i.exec(text);
  if (!verb) return text.slice(0, 40);
  return `${verb[1].toUpperCase()}${verb[2] && !/^WITH$/i.test(verb[1]) ? ` ${verb[2]}` : ''}`;
}

/** Requests by phase, on the Unix clock (ms). */
export class RequestTimeline {
  private readonly phases = new Map<string, Interval[]>();

  add(phase: string, startMs: number, endMs: number): void {
    const list = this.phases.get(phase) ?? [];
    list.push({ startMs, endMs });
    this.phases.set(phase, list);
  }

  entries(): Array<[string, Interval[]]> {
    return [...this.phases];
  }
}

/** The Unix time (ms) of a `performance.now()` reading. */
export function epochMs(performanceMs: number): number {
  return performance.timeOrigin + performanceMs;
}

const overlaps = (a: Interval, b: Interval) => a.startMs < b.endMs && b.startMs < a.endMs;

export function lineUp(text: string, timeline: RequestTimeline, slowStatementMs: number, runStartedMs: number) {
  const log = parseServerLog(text);
  const byClass = new Map<string, { count: number; totalMs: number; maxMs: number }>();
  for (const s of log.statements) {
    const c = byClass.get(s.statement) ?? { count: 0, totalMs: 0, maxMs: 0 };
    c.count += 1;
    c.totalMs += s.durationMs;
    c.maxMs = Math.max(c.maxMs, s.durationMs);
    byClass.set(s.statement, c);
  }
  const phases = timeline.entries().map(([phase, requests]) => {
    const threshold = percentile(
      requests.map((r) => r.endMs - r.startMs),
      99,
    );
    const slow = requests.filter((r) => r.endMs - r.startMs >= threshold);
    const withStatement = slow.filter((r) => log.statements.some((s) => overlaps(r, s)));
    const withCheckpoint = slow.filter((r) => log.checkpoints.some((c) => overlaps(r, c)));
    const span: Interval = { startMs: Math.min(...requests.map((r) => r.startMs)), endMs: Math.max(...requests.map((r) => r.endMs)) };
    const overlapClasses = new Map<string, number>();
    for (const r of slow) {
      for (const name of new Set(log.statements.filter((s) => overlaps(r, s)).map((s) => s.statement))) {
        overlapClasses.set(name, (overlapClasses.get(name) ?? 0) + 1);
      }
    }
    return {
      phase,
      requests: requests.length,
      slowRequestThresholdMs: round(threshold, 1),
      slowRequests: slow.length,
      slowRequestsOverlappingASlowStatement: withStatement.length,
      slowRequestsOverlappingACheckpoint: withCheckpoint.length,
      slowStatementsDuringPhase: log.statements.filter((s) => overlaps(s, span)).length,
      checkpointsDuringPhase: log.checkpoints.filter((c) => overlaps(c, span)).length,
      autovacuumsDuringPhase: log.autovacuums.filter((a) => a.atMs >= span.startMs && a.atMs <= span.endMs).length,
      statementClassesOverlappingSlowRequests: Object.fromEntries([...overlapClasses].sort((a, b) => b[1] - a[1]).slice(0, 5)),
    };
  });
  return {
    how: `PostgreSQL log_min_duration_statement=${slowStatementMs} ms, log_checkpoints, log_autovacuum_min_duration=0; slow requests = at or over each phase's p99; an overlap = the statement's or checkpoint's time span intersects the request's`,
    slowStatements: log.statements.length,
    slowStatementClasses: [...byClass]
      .map(([statement, c]) => ({ statement, count: c.count, meanMs: round(c.totalMs / c.count, 1), maxMs: round(c.maxMs, 1) }))
      .sort((a, b) => b.count - a.count)
      .slice(0, 8),
    checkpoints: log.checkpoints.map((c) => ({
      atSecond: round((c.startMs - runStartedMs) / 1000, 1),
      seconds: round((c.endMs - c.startMs) / 1000, 2),
      reason: c.reason,
      detail: c.detail,
    })),
    autovacuums: log.autovacuums.length,
    phases,
  };
}
