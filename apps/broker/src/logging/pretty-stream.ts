import { Writable } from 'node:stream';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const SHOWN_ELSEWHERE = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'context', 'req', 'res', 'responseTime']);

/** One pino JSON line as a person reads it: time, level, [context], message, then a request's summary or other fields. */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const level = LEVELS[entry.level as number] ?? String(entry.level);
  const context = typeof entry.context === 'string' ? `[${entry.context}] ` : '';
  const req = entry.req as { method?: string; url?: string; id?: string } | undefined;
  const res = entry.res as { statusCode?: number } | undefined;
  const request = req ? ` ${req.method} ${req.url} ${res?.statusCode ?? ''} ${entry.responseTime ?? '?'} ms (request ${req.id})` : '';
  const rest = Object.entries(entry)
    .filter(([key]) => !SHOWN_ELSEWHERE.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${time} ${level} ${context}${String(entry.msg ?? '')}${request}${rest ? ` ${rest}` : ''}\n`;
}

/** A destination for pino that writes readable lines to `out` (stdout by default). */
export function prettyStream(out: { write(text: string): unknown } = process.stdout): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const text = chunk.toString();
      out.write(
        text
          .split('\n')
          .filter((line) => line !== '')
          .map(prettyLine)
          .join(''),
      );
      done();
    },
  });
}
