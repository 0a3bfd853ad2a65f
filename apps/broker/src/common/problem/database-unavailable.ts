/**
 * Whether an error means the database cannot be reached right now (down, restarting, refusing
 * connections), as opposed to a bug: the client then gets a 503 it may retry, not a 500.
 */
// Shutting down / crashed / starting up; too many connections; a database closed to connections
// for maintenance (ALLOW_CONNECTIONS false answers 55000 at connect time).
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '55000']);
const UNAVAILABLE_SYSCALL_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);
// node-postgres raises these two without a code; their text is all there is to go on.
const UNAVAILABLE_DRIVER_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect$/];

export function isDatabaseUnavailable(error: unknown): boolean {
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
