/**
 * Everything the client throws is a BrokerError. An answer from the broker that is not a success
 * is a BrokerApiError built from its problem+json body (a subclass per family of status, and a
 * `kind` to switch on); not getting an answer is a BrokerNetworkError or a BrokerTimeoutError.
 */
import type { ProblemDetails, ProblemFieldError } from './types';

export type BrokerApiErrorKind =
  'validation' | 'unauthorized' | 'forbidden' | 'not_found' | 'conflict' | 'rate_limited' | 'unavailable' | 'server' | 'client';

/** The 429s a short wait ends: the broker's rate limits, and one from something in front of it. */
const TRANSIENT_429 = new Set(['/problems/rate-limited', 'about:blank']);
/** The 5xx a retry cannot end: the pool has no number for these participants, or an operator disabled every provider. */
const LASTING_5XX = new Set(['/problems/pool-exhausted', '/problems/no-provider']);

export interface BrokerErrorOptions {
  cause?: unknown;
  /** The `x-request-id` of the call: the broker logs every request under it. */
  requestId?: string;
}

export interface BrokerApiErrorOptions extends BrokerErrorOptions {
  /** The answer's `Retry-After`, in ms. */
  retryAfterMs?: number;
}

export class BrokerError extends Error {
  override readonly name: string = 'BrokerError';
  /**
   * The `x-request-id` the call was sent with (the broker's own when it answered with another): the
   * broker's log lines for this call carry it. Quote it when reporting a problem. Unset only on an
   * error built by hand.
   */
  readonly requestId?: string;

  constructor(message: string, options: BrokerErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.requestId !== undefined) this.requestId = options.requestId;
  }
}

export class BrokerApiError extends BrokerError {
  override readonly name: string = 'BrokerApiError';
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** For a validation problem: one entry per bad field. */
  readonly errors: ProblemFieldError[];
  /** Set on a 5xx the broker did not mean to send: quote it when reporting. */
  readonly errorId?: string;
  readonly kind: BrokerApiErrorKind;
  /** The problem as received (extension members included). */
  readonly problem: ProblemDetails;
  /** How long the broker asked to wait before trying again (`Retry-After`, sent with every 503), in ms. */
  readonly retryAfterMs?: number;

  constructor(problem: ProblemDetails, options: BrokerApiErrorOptions = {}) {
    super(problem.detail ? `${problem.title}: ${problem.detail}` : problem.title, options);
    this.problem = problem;
    this.status = problem.status;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail ?? '';
    this.errors = problem.errors ?? [];
    this.errorId = problem.errorId;
    this.kind = kindOf(problem.status);
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }

  /**
   * True when the same request, sent again soon, may succeed: a rate limit (429 `rate-limited`, or a 429
   * that is no problem of the broker's, a proxy's), or a 5xx other than the ones only a change can end
   * (`pool-exhausted`, `no-provider`). Never another 4xx: `429 participant-limit` stays until a session ends.
   */
  get retryable(): boolean {
    if (this.status === 429) return TRANSIENT_429.has(this.type);
    return this.status >= 500 && !LASTING_5XX.has(this.type);
  }

  /** Reads a failed response's body into the matching error class; a body that is no problem still gives one. */
  static async fromResponse(response: Response, sentRequestId?: string): Promise<BrokerApiError> {
    const text = await response.text().catch(() => '');
    const requestId = response.headers.get('x-request-id') ?? sentRequestId;
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    return createApiError(toProblem(response.status, response.statusText, text), { requestId, retryAfterMs });
  }
}

/** 400 and 422: the request itself is wrong (see `errors`), including an Idempotency-Key reused with another body. */
export class BrokerValidationError extends BrokerApiError {
  override readonly name: string = 'BrokerValidationError';
}
/** 401 and 403: the API key (or admin token) is missing, unknown, revoked or not allowed. */
export class BrokerAuthError extends BrokerApiError {
  override readonly name: string = 'BrokerAuthError';
}
export class BrokerNotFoundError extends BrokerApiError {
  override readonly name: string = 'BrokerNotFoundError';
}
export class BrokerConflictError extends BrokerApiError {
  override readonly name: string = 'BrokerConflictError';
}
export class BrokerRateLimitError extends BrokerApiError {
  override readonly name: string = 'BrokerRateLimitError';
}
/** 5xx, 503 included: every provider failed, the proxy-number pool is exhausted, or the broker failed. */
export class BrokerServerError extends BrokerApiError {
  override readonly name: string = 'BrokerServerError';
}

/** The broker could not be reached, or the connection broke before an answer. */
export class BrokerNetworkError extends BrokerError {
  override readonly name: string = 'BrokerNetworkError';
}

/** No answer within the call's timeout. */
export class BrokerTimeoutError extends BrokerError {
  override readonly name: string = 'BrokerTimeoutError';
  constructor(
    readonly timeoutMs: number,
    options: BrokerErrorOptions = {},
  ) {
    super(`No answer from the broker within ${timeoutMs} ms`, options);
  }
}

export function isBrokerApiError(error: unknown): error is BrokerApiError {
  return error instanceof BrokerApiError;
}

function kindOf(status: number): BrokerApiErrorKind {
  if (status === 400 || status === 422) return 'validation';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 429) return 'rate_limited';
  if (status === 503) return 'unavailable';
  if (status >= 500) return 'server';
  return 'client';
}

function createApiError(problem: ProblemDetails, options: BrokerApiErrorOptions = {}): BrokerApiError {
  switch (kindOf(problem.status)) {
    case 'validation':
      return new BrokerValidationError(problem, options);
    case 'unauthorized':
    case 'forbidden':
      return new BrokerAuthError(problem, options);
    case 'not_found':
      return new BrokerNotFoundError(problem, options);
    case 'conflict':
      return new BrokerConflictError(problem, options);
    case 'rate_limited':
      return new BrokerRateLimitError(problem, options);
    case 'unavailable':
    case 'server':
      return new BrokerServerError(problem, options);
    default:
      return new BrokerApiError(problem, options);
  }
}

/** `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3), in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A problem+json body as it is; anything else (a proxy's HTML page, an empty body) becomes a minimal problem. */
function toProblem(status: number, statusText: string, text: string): ProblemDetails {
  const parsed = parseJson(text);
  if (isRecord(parsed) && typeof parsed.title === 'string') {
    return {
      ...parsed,
      type: typeof parsed.type === 'string' ? parsed.type : 'about:blank',
      title: parsed.title,
      status: typeof parsed.status === 'number' ? parsed.status : status,
      detail: typeof parsed.detail === 'string' ? parsed.detail : undefined,
      errors: Array.isArray(parsed.errors) ? parsed.errors.filter(isFieldError) : undefined,
      errorId: typeof parsed.errorId === 'string' ? parsed.errorId : undefined,
    };
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return {
    type: 'about:blank',
    title: statusText || `HTTP ${status}`,
    status,
    detail: snippet ? `The broker answered ${status} without a problem body: ${snippet}` : `The broker answered ${status}.`,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFieldError(value: unknown): value is ProblemFieldError {
  return isRecord(value) && typeof value.field === 'string' && typeof value.message === 'string';
}
