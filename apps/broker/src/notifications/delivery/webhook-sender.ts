/**
 * One HTTP attempt of a webhook, over undici, with the delivery rules (docs/webhooks.md#delivery-rules): only a 2xx is delivered; a
 * redirect is not followed (a 3xx is a failure); 5 s to connect and 15 s for the whole attempt; at most
 * 64 KB of the response are read, streaming, and then the connection is dropped (a 2xx with a huge body
 * is still delivered). Customer targets go through an agent whose DNS lookup refuses non-public
 * addresses at connect time; proxies from the environment are never used (our own agents, no
 * EnvHttpProxyAgent). The operator's own ops URL is trusted configuration and skips the address rules.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { callbackUrlProblem, guardedLookup, systemResolver, type Resolver } from '../targets/target-policy';

export const MAX_RESPONSE_READ_BYTES = 64 * 1024;

export interface SenderSettings {
  readonly connectTimeoutMs: number;
  readonly attemptTimeoutMs: number;
  readonly allowPrivateTargets: boolean;
  /** WEBHOOK_MIN_PORT (default 1024). */
  readonly minPort?: number;
  /** DNS for customer targets (tests inject one that answers 127.0.0.1). */
  readonly resolver?: Resolver;
}

export interface WebhookRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** The operator's ops URL: not subject to the public-address rules. */
  readonly trusted?: boolean;
  /** Aborts the attempt (shutdown): the result is `aborted` and is not an attempt that counts. */
  readonly signal?: AbortSignal;
}

export interface AttemptResult {
  readonly delivered: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly aborted: boolean;
}

class AttemptTimeout extends Error {}

const CHECKED_URLS_MAX = 10_000;

export class WebhookSender {
  private readonly guarded: Agent;
  private readonly trusted: Agent;
  private readonly checkedUrls = new Map<string, string | null>();

  constructor(private readonly settings: SenderSettings) {
    const common = { headersTimeout: settings.attemptTimeoutMs, bodyTimeout: settings.attemptTimeoutMs, keepAliveTimeout: 10_000 };
    const lookup = guardedLookup(settings.resolver ?? systemResolver, { allowPrivateTargets: settings.allowPrivateTargets });
    this.guarded = new Agent({ ...common, connect: { timeout: settings.connectTimeoutMs, lookup } });
    this.trusted = new Agent({ ...common, connect: { timeout: settings.connectTimeoutMs } });
  }

  /** Never throws: every way an attempt can end is a result. */
  async send(req: WebhookRequest): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    if (!req.trusted) {
      // IP literals never reach the lookup: check the URL itself again at send time.
      const problem = this.urlProblem(req.url);
      if (problem) return { delivered: false, statusCode: null, error: `refused: the URL ${problem}`, durationMs: 0, aborted: false };
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeout()), this.settings.attemptTimeoutMs);
    const onAbort = (): void => controller.abort(req.signal?.reason);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (req.signal?.aborted) throw req.signal.reason;
      const response = await request(req.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'session-broker-webhooks/1', ...req.headers },
        body: req.body,
        dispatcher: req.trusted ? this.trusted : this.guarded,
        signal: controller.signal,
      });
      const statusCode = response.statusCode;
      await drain(response.body);
      const delivered = statusCode >= 200 && statusCode < 300;
      const error = delivered
        ? null
        : statusCode >= 300 && statusCode < 400
          ? `HTTP ${statusCode}: redirects are not followed`
          : `HTTP ${statusCode}`;
      return { delivered, statusCode, error, durationMs: elapsed(), aborted: false };
    } catch (error) {
      const aborted = req.signal?.aborted === true && !(controller.signal.reason instanceof AttemptTimeout);
      return { delivered: false, statusCode: null, error: this.describe(error, controller.signal), durationMs: elapsed(), aborted };
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The URL check depends on the URL alone: remembered, since every attempt to an endpoint asks again. */
  private urlProblem(url: string): string | null {
    let problem = this.checkedUrls.get(url);
    if (problem === undefined) {
      problem = callbackUrlProblem(url, { allowPrivateTargets: this.settings.allowPrivateTargets, minPort: this.settings.minPort });
      if (this.checkedUrls.size >= CHECKED_URLS_MAX) this.checkedUrls.clear();
      this.checkedUrls.set(url, problem);
    }
    return problem;
  }

  async close(): Promise<void> {
    await Promise.all([this.guarded.close(), this.trusted.close()]);
  }

  private describe(error: unknown, signal: AbortSignal): string {
    if (signal.aborted && signal.reason instanceof AttemptTimeout) return `timeout after ${this.settings.attemptTimeoutMs} ms`;
    const err = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const code = err?.code ?? err?.cause?.code;
    switch (code) {
      case 'ERR_WEBHOOK_FORBIDDEN_TARGET':
        return err.message;
      case 'UND_ERR_CONNECT_TIMEOUT':
        return `connect timeout after ${this.settings.connectTimeoutMs} ms`;
      case 'UND_ERR_HEADERS_TIMEOUT':
      case 'UND_ERR_BODY_TIMEOUT':
        return `timeout after ${this.settings.attemptTimeoutMs} ms`;
      case 'ECONNREFUSED':
        return 'connection refused';
      case 'ECONNRESET':
      case 'UND_ERR_SOCKET':
        return 'connection closed by the endpoint';
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `DNS: ${err.message}`;
      default:
        if (signal.aborted) return 'aborted: the broker is shutting down';
        return code ? `${code}: ${err.message}` : String(err?.message ?? error);
    }
  }
}

/** Reads at most MAX_RESPONSE_READ_BYTES, then drops the rest (and the connection). Only the status counts, so read errors do not matter. */
async function drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += chunk.length;
      if (read >= MAX_RESPONSE_READ_BYTES) break;
    }
  } catch {
    // The status line already arrived; a body cut short changes nothing.
  } finally {
    if (read >= MAX_RESPONSE_READ_BYTES) body.destroy();
  }
}
