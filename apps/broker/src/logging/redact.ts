/**
 * What may reach a log line from a request or an error: only the headers and query parameters known to be
 * harmless keep their values (an allow-list: a credential under a name nobody thought of, `x-api-key`,
 * `proxy-authorization`, `?bearer=`, stays out as well), never the parameters of a failed SQL statement
 * (phone numbers, metadata).
 */

/** Request headers logged with their values; any other is logged by name, its value `[REDACTED]`. */
const LOGGED_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'connection',
  'content-encoding',
  'content-length',
  'content-type',
  'host',
  'idempotency-key',
  'last-event-id',
  'origin',
  'traceparent',
  'tracestate',
  'user-agent',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'x-request-id',
]);

/** Query parameters the broker's routes take, none a secret; any other is logged by name, its value `[REDACTED]`. */
const LOGGED_QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  'call',
  'channel',
  'cursor',
  'limit',
  'number',
  'provider',
  'session',
  'status',
  'uniqueName',
]);

const REDACTED = '[REDACTED]';

/** `path?api_key=...&limit=5` → `path?api_key=[REDACTED]&limit=5`: only the parameters of the allow-list keep their values. */
export function redactUrl(url: string | undefined): string | undefined {
  if (url === undefined) return url;
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = safeDecode(eq < 0 ? pair : pair.slice(0, eq));
      return LOGGED_QUERY_PARAMETERS.has(name) || pair === '' ? pair : `${eq < 0 ? pair : pair.slice(0, eq)}=${REDACTED}`;
    })
    .join('&');
  return `${url.slice(0, mark)}?${query}`;
}

/** The headers of the allow-list with their values, the others by name only. */
function redactHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (headers === undefined) return headers;
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, LOGGED_HEADERS.has(name.toLowerCase()) ? value : REDACTED]),
  );
}

/**
 * A request as pino's standard serializer maps it, with its URL and headers redacted. Express's parsed `query` is left
 * out: it repeats the URL's parameters, unredacted.
 */
export function redactRequest(req: { url?: string; query?: unknown; headers?: Record<string, unknown> }): Record<string, unknown> {
  const { query: _query, ...rest } = req;
  return { ...rest, url: redactUrl(req.url), headers: redactHeaders(req.headers) };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * An error as logged: its kind, message, code and stack only. TypeORM's QueryFailedError carries
 * the statement's `parameters` and the driver error's `detail` (which quotes values); neither is kept.
 */
export function serializeError(value: unknown): Record<string, unknown> {
  // pino's error serializer (wrapErrorSerializer) hands over its own serialization, with the original as `raw`.
  const error = value instanceof Error ? value : (value as { raw?: unknown } | null)?.raw;
  if (!(error instanceof Error)) return { message: typeof value === 'string' ? value : 'non-error value thrown' };
  const { code, errorId } = error as Error & { code?: unknown; errorId?: unknown };
  const cause = (error as { cause?: unknown }).cause;
  return {
    type: error.constructor?.name ?? error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(typeof errorId === 'string' ? { errorId } : {}),
    stack: error.stack,
    ...(cause instanceof Error ? { cause: serializeError(cause) } : {}),
  };
}
