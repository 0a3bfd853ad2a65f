/** Reading a vendor's answer and naming a transport failure: shared by every HTTP adapter. */

/** The body as a JSON object, or undefined when it is not one. */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const first = (current as { errors?: unknown[] }).errors?.[0];
    const inner = (first as { code?: unknown } | undefined)?.code;
    if (typeof inner === 'string') return inner;
  }
  return undefined;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

export function isTimeoutError(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && TIMEOUT_CODES.has(code);
}

const TRANSPORT_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection dropped by the provider',
  UND_ERR_CLOSED: 'connection closed',
  ENOTFOUND: 'DNS lookup failed',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

export function describeTransportError(error: unknown): string {
  const code = errorCode(error);
  if (code) return `${TRANSPORT_ERRORS[code] ?? 'transport error'} (${code})`;
  return `transport error (${error instanceof Error ? error.message : String(error)})`;
}
