import type { LoggerService } from '@nestjs/common';
import type { Logger as Pino } from 'pino';

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * Nest's `Logger` written as pino lines (JSON, or readable with LOG_FORMAT=pretty). Nest passes the
 * logger's context as the last parameter; an object given first is merged into the line, so
 * `logger.warn({ reqId, provider }, 'text')` writes `{"context":"...","reqId":...,"provider":...,"msg":"text"}`.
 *
 * No request is bound here (no AsyncLocalStorage, whose promise hook costs every promise of every request):
 * a line written inside a request names it with the fields it is given (docs/operations.md#logging).
 */
export class AppLogger implements LoggerService {
  constructor(readonly pino: Pino) {}

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    let rest = params;
    if (params.length > 0) {
      const context = params[params.length - 1];
      if (context !== undefined) fields.context = context;
      rest = params.slice(0, -1).filter((param) => param !== undefined);
    }
    if (message instanceof Error) {
      fields.err = message;
      this.pino[level](fields, ...(rest as [string?]));
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level](Object.assign(fields, message), ...(rest as [string?]));
    } else if (level === 'error' && typeof message === 'string' && rest.length === 1 && isStack(rest[0])) {
      // Nest's own exception handlers call error(message, stack, context).
      const err = new Error(message);
      err.stack = rest[0];
      this.pino.error({ ...fields, err });
    } else {
      this.pino[level](fields, String(message), ...rest);
    }
  }
}

function isStack(value: unknown): value is string {
  return typeof value === 'string' && /\n\s*at /.test(value);
}
