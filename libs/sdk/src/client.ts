/**
 * The broker's HTTP API for a customer's backend. Every call has a timeout and is retried on what a
 * retry can fix (a network error, a timeout, a rate limit, a 5xx but `pool-exhausted` and `no-provider`:
 * `BrokerApiError.retryable`) with a short, bounded, jittered backoff (or after the broker's
 * `Retry-After`); never on another 4xx, `429 participant-limit` included. `createSession` sends an Idempotency-Key (a fresh
 * UUID unless given) and reuses that same key on every retry, so a retried create never makes a
 * second session. Every call sends one `x-request-id`, and every error carries it as `requestId`.
 */
import { randomUUID } from 'node:crypto';
import { BrokerApiError, BrokerError, BrokerNetworkError, BrokerTimeoutError } from './errors';
import { readServerSentEvents } from './sse';
import type {
  AccountCallbackUrl,
  AccountDefaultCountry,
  AccountInterceptUrl,
  AccountRescue,
  BrokerEvent,
  CpaasHealth,
  CpaasHealthEvent,
  CreateSessionInput,
  Delivery,
  EventPage,
  Interaction,
  ListEventsQuery,
  ListSessionsQuery,
  RevealedWebhookSecret,
  RotatedWebhookSecret,
  SendMessageInput,
  Session,
  SessionPage,
  SetRescueInput,
  WebhookSecretStatus,
} from './types';
import { SDK_VERSION } from './version';

export interface BrokerClientOptions {
  /** Where the broker is, e.g. `https://broker.example.com`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /**
   * Per attempt, until the whole answer is read. Default 30 000 ms: above the broker's worst case for a
   * create (PROVIDER_CALL_TIMEOUT_MS, 5 s, for each of its providers in turn).
   */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 2. */
  retries?: number;
  /** First backoff; it doubles per retry, with jitter, capped at 2 s. Default 200 ms. */
  retryDelayMs?: number;
  /**
   * The longest `Retry-After` the client waits for before a retry. Default 10 000 ms. A 429 or 5xx asking
   * for a longer wait is not retried: it is thrown at once, with `retryAfterMs` set.
   */
  maxRetryAfterMs?: number;
  /** Added to the `User-Agent` (e.g. `my-app/1.4`), which always names this SDK and its version. */
  userAgent?: string;
  /** Another fetch (a proxy agent, a test double). Default: the global fetch. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for this call. */
  timeoutMs?: number;
  /** Overrides the client's retries for this call (0: one attempt only). */
  retries?: number;
}

export interface CreateSessionOptions extends CallOptions {
  /** Default: a fresh UUID; pass your own to make a create safe to repeat across your own restarts. */
  idempotencyKey?: string;
}

export interface SendMessageOptions extends CallOptions {
  /** Default: a fresh UUID, reused by every retry of the call; pass your own to make a send safe to repeat across restarts. */
  idempotencyKey?: string;
}

export interface SentMessage extends Interaction {
  /** The Idempotency-Key the message was sent with. */
  readonly idempotencyKey: string;
  /** True when the broker answered with the stored response of an earlier request with this key. */
  readonly replayed: boolean;
}

export interface CreatedSession extends Session {
  /** The Idempotency-Key the create was sent with. */
  readonly idempotencyKey: string;
  /** True when the broker answered with the stored response of an earlier request with this key. */
  readonly replayed: boolean;
}

export interface WatchOptions {
  signal?: AbortSignal;
  /** Reconnect when the stream drops (default true), as EventSource does. */
  reconnect?: boolean;
  /** Delay before a reconnect unless the server sent `retry:`. Default 1 000 ms. */
  reconnectDelayMs?: number;
}

/** PROVIDER_CALL_TIMEOUT_MS (5 s) for each of two providers, with room for the database. */
export const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RETRIES = 2;
const DEFAULT_RETRY_DELAY_MS = 200;
const MAX_RETRY_DELAY_MS = 2_000;
const DEFAULT_MAX_RETRY_AFTER_MS = 10_000;
const HEALTH_EVENTS = new Set(['snapshot', 'provider', 'transition']);

interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  auth?: boolean;
}

export class BrokerClient {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly userAgent: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: BrokerClientOptions) {
    if (!options.baseUrl) throw new TypeError('BrokerClient: baseUrl is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retries = Math.max(0, options.retries ?? DEFAULT_RETRIES);
    this.retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    const sdk = `session-broker-sdk/${SDK_VERSION} node/${process.versions.node}`;
    this.userAgent = options.userAgent ? `${options.userAgent} ${sdk}` : sdk;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async createSession(input: CreateSessionInput, options: CreateSessionOptions = {}): Promise<CreatedSession> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const response = await this.send(
      { method: 'POST', path: '/v1/sessions', body: input, headers: { 'idempotency-key': idempotencyKey } },
      options,
    );
    const session = (await response.json()) as Session;
    return { ...session, idempotencyKey, replayed: response.headers.get('idempotent-replayed') === 'true' };
  }

  async getSession(id: string, options: CallOptions = {}): Promise<Session> {
    return this.json<Session>({ method: 'GET', path: `/v1/sessions/${encodeURIComponent(id)}` }, options);
  }

  /** Every session, page after page (one request per page, as the loop asks for more). */
  async *listSessions(query: ListSessionsQuery = {}, options: CallOptions = {}): AsyncGenerator<Session, void, undefined> {
    for await (const page of this.listSessionPages(query, options)) yield* page.sessions;
  }

  /** The raw pages of `GET /v1/sessions`, following `nextCursor`. */
  async *listSessionPages(query: ListSessionsQuery = {}, options: CallOptions = {}): AsyncGenerator<SessionPage, void, undefined> {
    let cursor: string | undefined = query.cursor;
    do {
      const page: SessionPage = await this.json<SessionPage>(
        { method: 'GET', path: '/v1/sessions', query: { status: query.status, uniqueName: query.uniqueName, limit: query.limit, cursor } },
        options,
      );
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** Closes the session (no new relays); answers the closed session. */
  async closeSession(id: string, options: CallOptions = {}): Promise<Session> {
    return this.json<Session>({ method: 'DELETE', path: `/v1/sessions/${encodeURIComponent(id)}` }, options);
  }

  /**
   * Sends a text from the session's proxy number to one participant (202: accepted, relayed or queued). Durable
   * and retried by the broker like a relay (`message.relayed` / `message.failed`). Sends an Idempotency-Key (a
   * fresh UUID unless given) and reuses it on every retry, so a retried send never sends twice.
   */
  async sendMessage(sessionId: string, input: SendMessageInput, options: SendMessageOptions = {}): Promise<SentMessage> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const response = await this.send(
      {
        method: 'POST',
        path: `/v1/sessions/${encodeURIComponent(sessionId)}/messages`,
        body: input,
        headers: { 'idempotency-key': idempotencyKey },
      },
      options,
    );
    const interaction = (await response.json()) as Interaction;
    return { ...interaction, idempotencyKey, replayed: response.headers.get('idempotent-replayed') === 'true' };
  }

  /** Every interaction of the session, oldest first: the broker answers them in pages, followed here to the last. */
  async listInteractions(sessionId: string, options: CallOptions = {}): Promise<Interaction[]> {
    const all: Interaction[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.json<{ interactions: Interaction[]; nextCursor?: string | null }>(
        { method: 'GET', path: `/v1/sessions/${encodeURIComponent(sessionId)}/interactions`, query: { limit: 200, cursor } },
        options,
      );
      all.push(...page.interactions);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }

  /** The breaker state of every provider (no auth needed). */
  async getCpaasHealth(options: CallOptions = {}): Promise<CpaasHealth> {
    return this.json<CpaasHealth>({ method: 'GET', path: '/v1/health/cpaas', auth: false }, options);
  }

  /** The account's default callback URL (`GET /v1/account/callback-url`). */
  async getCallbackUrl(options: CallOptions = {}): Promise<AccountCallbackUrl> {
    return this.json<AccountCallbackUrl>({ method: 'GET', path: '/v1/account/callback-url' }, options);
  }

  /**
   * Sets (or clears, with null) where session events go when a session has no callbackUrl of its own.
   * The answer carries `webhookSecret` when the broker shows the account's signing secret (when this
   * call made it): keep it, it is not shown again.
   */
  async setCallbackUrl(callbackUrl: string | null, options: CallOptions = {}): Promise<AccountCallbackUrl> {
    return this.json<AccountCallbackUrl>({ method: 'PUT', path: '/v1/account/callback-url', body: { callbackUrl } }, options);
  }

  /** The country whose national numbers participants may be written in (`GET /v1/account/default-country`). */
  async getDefaultCountry(options: CallOptions = {}): Promise<AccountDefaultCountry> {
    return this.json<AccountDefaultCountry>({ method: 'GET', path: '/v1/account/default-country' }, options);
  }

  /** Sets (or clears, with null) it: with `NG`, `08031234567` is read as `+2348031234567`; answers stay E.164. */
  async setDefaultCountry(country: string | null, options: CallOptions = {}): Promise<AccountDefaultCountry> {
    return this.json<AccountDefaultCountry>({ method: 'PUT', path: '/v1/account/default-country', body: { country } }, options);
  }

  /** The account's intercept URL (`GET /v1/account/intercept-url`). */
  async getInterceptUrl(options: CallOptions = {}): Promise<AccountInterceptUrl> {
    return this.json<AccountInterceptUrl>({ method: 'GET', path: '/v1/account/intercept-url' }, options);
  }

  /**
   * Sets (or clears, with null) the URL asked before each relay and bridge of the account's sessions that name
   * no interceptUrl of their own: answer 2xx to let it through, 403 to block it (`constructInterceptRequest`).
   */
  async setInterceptUrl(interceptUrl: string | null, options: CallOptions = {}): Promise<AccountInterceptUrl> {
    return this.json<AccountInterceptUrl>({ method: 'PUT', path: '/v1/account/intercept-url', body: { interceptUrl } }, options);
  }

  /** Whether the account's sessions are rescued from a provider that stays down (`GET /v1/account/rescue`). */
  async getRescue(options: CallOptions = {}): Promise<AccountRescue> {
    return this.json<AccountRescue>({ method: 'GET', path: '/v1/account/rescue' }, options);
  }

  /**
   * Turns session rescue on: once a provider's breaker has been OPEN for `afterSeconds`, each of the account's active
   * sessions on it moves to a new proxy number on a provider that admits it (`session.rebound`, or
   * `session.rescue_failed`), each participant texted `notice` from the new number where the session has texts.
   */
  async setRescue(input: SetRescueInput, options: CallOptions = {}): Promise<AccountRescue> {
    return this.json<AccountRescue>({ method: 'PUT', path: '/v1/account/rescue', body: input }, options);
  }

  /** Turns it off: sessions stay on their provider until they end (the default). */
  async disableRescue(options: CallOptions = {}): Promise<AccountRescue> {
    return this.json<AccountRescue>({ method: 'DELETE', path: '/v1/account/rescue' }, options);
  }

  /** Whether a signing secret exists, since when, and until when the previous one signs; never the secret. */
  async getWebhookSecretStatus(options: CallOptions = {}): Promise<WebhookSecretStatus> {
    return this.json<WebhookSecretStatus>({ method: 'GET', path: '/v1/account/webhook-secret' }, options);
  }

  /**
   * The current signing secret, if it was never shown (the account's first one, made with the account):
   * shown this once. A secret already shown is a BrokerConflictError (409): rotate for a new one.
   */
  async revealWebhookSecret(options: CallOptions = {}): Promise<RevealedWebhookSecret> {
    return this.json<RevealedWebhookSecret>(
      { method: 'POST', path: '/v1/account/webhook-secret/reveal' },
      { ...options, retries: options.retries ?? 0 },
    );
  }

  /**
   * A new signing secret, shown this once; the previous one keeps signing for 24 h. Not retried: a
   * rotation whose answer was lost has still happened (rotate again, then use the newest secret).
   */
  async rotateWebhookSecret(options: CallOptions = {}): Promise<RotatedWebhookSecret> {
    return this.json<RotatedWebhookSecret>(
      { method: 'POST', path: '/v1/account/webhook-secret/rotate' },
      { ...options, retries: options.retries ?? 0 },
    );
  }

  /** Your events (optionally one session's), newest first, page after page, each with its deliveries. */
  async *listEvents(query: ListEventsQuery = {}, options: CallOptions = {}): AsyncGenerator<BrokerEvent, void, undefined> {
    for await (const page of this.listEventPages(query, options)) yield* page.events;
  }

  /** The raw pages of `GET /v1/events`, following `nextCursor`. */
  async *listEventPages(query: ListEventsQuery = {}, options: CallOptions = {}): AsyncGenerator<EventPage, void, undefined> {
    let cursor: string | undefined = query.cursor;
    do {
      const page: EventPage = await this.json<EventPage>(
        { method: 'GET', path: '/v1/events', query: { session: query.session, limit: query.limit, cursor } },
        options,
      );
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** A webhook delivery (its id is the `webhook-id` header) with every attempt and the URL's state. */
  async getDelivery(id: string, options: CallOptions = {}): Promise<Delivery> {
    return this.json<Delivery>({ method: 'GET', path: `/v1/deliveries/${encodeURIComponent(id)}` }, options);
  }

  /**
   * `GET /v1/health/cpaas/stream` as an async iterator of typed events: a `snapshot` at once and
   * every 2 s, `provider` on each state change, `transition` per breaker transition. Stop it with
   * `break` (or `return()`) or by aborting `signal`. A dropped stream is reconnected, after the
   * server's `retry:` delay; a refused one (4xx) throws.
   */
  async *watchCpaasHealth(options: WatchOptions = {}): AsyncGenerator<CpaasHealthEvent, void, undefined> {
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(options.signal?.reason);
    if (options.signal?.aborted) return;
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let delayMs = options.reconnectDelayMs ?? 1_000;
    let failedReconnects = 0;
    try {
      for (;;) {
        let received = false;
        try {
          const response = await this.send(
            { method: 'GET', path: '/v1/health/cpaas/stream', auth: false, headers: { accept: 'text/event-stream' } },
            { signal: stop.signal, retries: 0, bodyOutlivesTimeout: true },
          );
          if (!response.body)
            throw new BrokerNetworkError('The health stream has no body', { requestId: response.headers.get('x-request-id') ?? undefined });
          for await (const message of readServerSentEvents(response.body, stop.signal)) {
            if (message.retry !== undefined) delayMs = message.retry;
            if (!HEALTH_EVENTS.has(message.event)) continue;
            received = true;
            failedReconnects = 0;
            yield { type: message.event, data: JSON.parse(message.data) as unknown } as CpaasHealthEvent;
          }
        } catch (error) {
          if (stop.signal.aborted) return;
          const transient = error instanceof BrokerNetworkError || error instanceof BrokerTimeoutError || isRetryableApiError(error);
          if (!transient || options.reconnect === false || (!received && ++failedReconnects > this.retries)) throw error;
        }
        if (stop.signal.aborted || options.reconnect === false) return;
        await sleep(delayMs, stop.signal);
        if (stop.signal.aborted) return;
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  private async json<T>(spec: RequestSpec, options: CallOptions): Promise<T> {
    const response = await this.send(spec, options);
    return (await response.json()) as T;
  }

  /** One logical call: attempts with timeout and backoff until a 2xx, a final error, or the caller aborts. */
  private async send(spec: RequestSpec, options: CallOptions & { bodyOutlivesTimeout?: boolean }): Promise<Response> {
    const url = this.url(spec);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const retries = Math.max(0, options.retries ?? this.retries);
    const requestId = randomUUID();
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.userAgent,
      'x-request-id': requestId,
      ...spec.headers,
    };
    if (spec.auth !== false) headers.authorization = `Bearer ${this.apiKey}`;
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    if (body !== undefined) headers['content-type'] = 'application/json';

    for (let attempt = 0; ; attempt++) {
      let failure: BrokerError;
      let waitMs: number | undefined;
      const timer = new AbortController();
      const timeout = setTimeout(() => timer.abort(), timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timer.signal]) : timer.signal;
      try {
        const response = await this.fetchImpl(url, { method: spec.method, headers, body, signal, redirect: 'error' });
        // A stream may run for hours; a plain body is read under the same timer.
        if (options.bodyOutlivesTimeout && response.ok) {
          clearTimeout(timeout);
          return response;
        }
        if (response.ok) return await buffered(response);
        const error = await BrokerApiError.fromResponse(response, requestId);
        if (!error.retryable) throw error;
        // Retrying sooner than the broker asked is pointless; waiting longer than the caller allows is theirs to decide.
        if (error.retryAfterMs !== undefined && error.retryAfterMs > this.maxRetryAfterMs) throw error;
        failure = error;
        waitMs = error.retryAfterMs;
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (error instanceof BrokerApiError) throw error;
        failure = timer.signal.aborted
          ? new BrokerTimeoutError(timeoutMs, { requestId })
          : new BrokerNetworkError(unreachable(error), { cause: error, requestId });
      } finally {
        clearTimeout(timeout);
      }
      if (attempt >= retries) throw failure;
      await sleep(waitMs ?? this.backoff(attempt), options.signal);
      if (options.signal?.aborted) throw options.signal.reason;
    }
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(MAX_RETRY_DELAY_MS, this.retryDelayMs * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private url(spec: RequestSpec): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) if (value !== undefined) params.set(name, String(value));
    const query = params.toString();
    return `${this.baseUrl}${spec.path}${query ? `?${query}` : ''}`;
  }
}

/** Reads the body while the attempt's timer still runs, so a stalled body counts as a timeout too. */
async function buffered(response: Response): Promise<Response> {
  const text = await response.text();
  const empty = response.status === 204 || response.status === 205 || response.status === 304;
  return new Response(empty ? null : text, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function isRetryableApiError(error: unknown): boolean {
  return error instanceof BrokerApiError && error.retryable;
}

function unreachable(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return `Cannot reach the broker (${cause.code})`;
  return `Cannot reach the broker: ${cause?.message ?? (error instanceof Error ? error.message : String(error))}`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
