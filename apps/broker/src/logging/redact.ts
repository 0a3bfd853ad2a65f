/**
 * What may reach a log line from a request or an error: never a secret that arrived in a query
 * string, never the parameters of a failed SQL statement (phone numbers, metadata).
 */

/** Query parameters whose values are secrets whatever route they are sent to. */
const SECRET_PARAMETER = /key|token|secret|password|passwd|signature|sig$|auth|credential/i;

/** `path?api_key=...&limit=5` → `path?api_key=[REDACTED]&limit=5`. */
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
      return SECRET_PARAMETER.test(name) ? `${eq < 0 ? pair : pair.slice(0, eq)}=[REDACTED]` : pair;
    })
    .join('&');
  return `${url.slice(0, mark)}?${query}`;
}

/**
 * A request as pino-http serializes it, with its URL redacted. Express's parsed `query` is left out: it
 * repeats the URL's parameters, secrets unredacted.
 */
export function redactRequest(req: { url?: string; query?: unknown }): Record<string, unknown> {
  const { query: _query, ...rest } = req;
  return { ...rest, url: redactUrl(req.url) };
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
  // pino-http hands over pino's own serialization of the error, with the original as `raw`.
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
