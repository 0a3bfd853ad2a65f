import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';

/**
 * Whether an error means the database cannot be reached right now (down, restarting, refusing
 * connections), as opposed to a bug: the client then gets a 503 it may retry, not a 500.
 */
// Shutting down / crashed / starting up; too many connections; a database closed to connections
// for maintenance (ALLOW_CONNECTIONS false answers 55000 at connect time); a write refused by a
// read-only server (25006: a standby, such as the node a failover is promoting, reached a moment
// before its promotion has finished, or a database an operator made read-only).
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '55000', '25006']);
const UNAVAILABLE_SYSCALL_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);
// node-postgres raises these without a code; their text is all there is to go on. The last two: a
// statement sent on a connection that had already failed or been closed (a failover took its server).
const UNAVAILABLE_DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  // TypeORM releases a query runner whose connection failed (its 'error' event: the server went away, as in
  // a failover); the runner's next statement, say the next one of a transaction (on the runner, or on its
  // EntityManager), then raises one of these. Both seen in the failover drill, as 500s until this.
  if (error instanceof QueryRunnerAlreadyReleasedError || error instanceof QueryRunnerProviderAlreadyReleasedError) return true;
  for (let candidate: unknown = error, hops = 0; candidate && hops < 4; hops++) {
    const { code, message } = candidate as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SYSCALL_CODES.has(code)))
      return true;
    if (typeof message === 'string' && UNAVAILABLE_DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
    // TypeORM wraps the driver's error.
    candidate = (candidate as { driverError?: unknown; cause?: unknown }).driverError ?? (candidate as { cause?: unknown }).cause;
  }
  return false;
}
