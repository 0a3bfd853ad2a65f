/**
 * The request middleware: every request gets an id (`x-request-id` when sane, else a new UUID), echoed in the
 * response and set as `req.id`, and, unless its path is a health poll, one completion line when it ends, at info for
 * a 2xx/3xx, warn for a 4xx, error for a 5xx or an error (the lines pino-http wrote: `req`, `res`, `responseTime`,
 * `err`; "request completed", "request aborted", "request errored").
 *
 * Nothing is built for a line whose level is off: the request's child logger (whose bindings pino serializes, and so
 * redacts, when it is made) is made only when its line is written. pino-http made it for every request, also at
 * LOG_LEVEL=warn, where a create's 201 writes nothing (issue #34: measured in docs/BENCHMARKS.md).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Level, Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Health polls would drown the log. */
const UNLOGGED = /^\/health|^\/metrics|^\/v1\/health\/cpaas$/;

type Request = IncomingMessage & { id?: string };
type Middleware = (req: Request, res: ServerResponse, next: () => void) => void;

export function requestLog(logger: Logger): Middleware {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('x-request-id', id);
    if (UNLOGGED.test(req.url ?? '')) return next();
    const started = Date.now();
    const ended = (err?: Error): void => {
      res.removeListener('close', ended);
      res.removeListener('finish', ended);
      res.removeListener('error', ended);
      const failed = err !== undefined || res.statusCode >= 500;
      const level: Level = failed ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const log = logger.child({ req });
      const responseTime = Date.now() - started;
      if (failed) {
        log[level]({ res, err: err ?? new Error(`failed with status code ${res.statusCode}`), responseTime }, 'request errored');
      } else {
        log[level]({ res, responseTime }, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
      }
    };
    res.on('close', ended);
    res.on('finish', ended);
    res.on('error', ended);
    next();
  };
}
