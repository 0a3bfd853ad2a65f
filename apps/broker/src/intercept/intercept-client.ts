/**
 * The intercept: before it relays an inbound text or bridges an inbound call of a session with an intercept
 * URL (the session's own, else its account's), the broker asks that URL, synchronously, signed like every
 * webhook (Standard Webhooks headers, the account's secrets), with the same address rules (public addresses
 * only unless WEBHOOK_ALLOW_PRIVATE_TARGETS, checked again at connect time after DNS; no redirects). A 2xx
 * lets the interaction through, a 403 blocks it; no answer within INTERCEPT_TIMEOUT_MS, or any other answer,
 * leaves it to INTERCEPT_ON_ERROR. The caller holds no database connection while it waits: nothing here
 * touches the database but the signing secrets' read, done before the request is sent (docs/design.md#intercept).
 */
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type { Clock } from '@app/clock';
import { signWebhook } from '@app/sdk';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { WebhookSecrets, WebhookSender } from '../notifications';

export const INTERCEPT_EVENT_TYPE = 'interaction.intercept';

/** What the intercept URL said, as a class of answers. */
export type InterceptOutcome = 'allowed' | 'blocked' | 'timeout' | 'error';

export interface InterceptDecision {
  readonly verdict: 'allow' | 'block';
  readonly outcome: InterceptOutcome;
  /** What happened, in words: "HTTP 403", "no answer within 2000 ms", "HTTP 500", "connection refused". */
  readonly detail: string;
}

export interface InterceptQuestion {
  readonly url: string;
  /** Whose secrets sign it. */
  readonly accountId: string;
  /** The `webhook-id` header and the body's `id`: the interaction's id, the same if the provider sends its webhook again. */
  readonly id: string;
  /** `{ session, interaction }`. */
  readonly data: Record<string, unknown>;
}

/** The request an intercept question is sent as. */
export interface InterceptRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

/**
 * Another way of putting the question than the broker's own signed JSON: the Twilio-Proxy-compatible API's
 * (Twilio's form parameters and `X-Twilio-Signature`) for its sessions. The answer is read the same way.
 */
export interface InterceptDialect {
  /** The request for this question, or null when the dialect does not speak for its session. */
  request(question: InterceptQuestion, now: number): Promise<InterceptRequest | null>;
}

class InterceptTimeout extends Error {}

@Injectable()
export class InterceptClient implements OnApplicationShutdown {
  private readonly logger = new Logger(InterceptClient.name);
  private readonly sender: WebhookSender;
  private readonly timeoutMs: number;
  private readonly onError: 'allow' | 'block';
  private readonly dialects: InterceptDialect[] = [];

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(WebhookSecrets) private readonly secrets: WebhookSecrets,
    private readonly metrics: BrokerMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.timeoutMs = config.intercept.timeoutMs;
    this.onError = config.intercept.onError;
    // The sender's own limits sit past ours: INTERCEPT_TIMEOUT_MS, below, is what ends a slow intercept.
    this.sender = new WebhookSender({
      connectTimeoutMs: this.timeoutMs + 1_000,
      attemptTimeoutMs: this.timeoutMs + 1_000,
      allowPrivateTargets: config.notifications.allowPrivateTargets,
      minPort: config.notifications.minPort,
    });
    metrics.limits.set({ limit: 'intercept_timeout_ms' }, this.timeoutMs);
  }

  /** From now on `dialect` may put the questions about its sessions its own way. */
  speak(dialect: InterceptDialect): void {
    this.dialects.push(dialect);
  }

  async ask(question: InterceptQuestion): Promise<InterceptDecision> {
    const started = performance.now();
    const now = this.clock.now();
    const { url, body, headers } = (await this.inDialect(question, now)) ?? (await this.signedJson(question, now));

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new InterceptTimeout()), this.timeoutMs);
    const result = await this.sender.send({ url, body, headers, signal: deadline.signal });
    clearTimeout(timer);

    const decision = this.decide(result.delivered, result.statusCode, result.aborted, result.error);
    this.metrics.interceptRequests.inc({ outcome: decision.outcome, decision: decision.verdict });
    this.metrics.interceptDuration.observe({ outcome: decision.outcome }, (performance.now() - started) / 1000);
    if (decision.outcome === 'timeout' || decision.outcome === 'error')
      this.logger.warn(
        { interactionId: question.id, accountId: question.accountId },
        `intercept for ${question.id} failed (${decision.detail}); INTERCEPT_ON_ERROR=${this.onError}`,
      );
    return decision;
  }

  private async inDialect(question: InterceptQuestion, now: number): Promise<InterceptRequest | null> {
    for (const dialect of this.dialects) {
      const request = await dialect.request(question, now);
      if (request) return request;
    }
    return null;
  }

  /** `{ id, type: interaction.intercept, timestamp, data }`, signed with the account's secrets (Standard Webhooks). */
  private async signedJson(question: InterceptQuestion, now: number): Promise<InterceptRequest> {
    const body = JSON.stringify({
      id: question.id,
      type: INTERCEPT_EVENT_TYPE,
      timestamp: new Date(now).toISOString(),
      data: question.data,
    });
    const secrets = await this.secrets.signingSecrets(question.accountId);
    const timestamp = Math.floor(now / 1000);
    const headers: Record<string, string> = { 'webhook-id': question.id, 'webhook-timestamp': String(timestamp) };
    if (secrets.length > 0) headers['webhook-signature'] = signWebhook({ id: question.id, timestamp, payload: body, secret: secrets });
    return { url: question.url, body, headers };
  }

  onApplicationShutdown(): Promise<void> {
    return this.sender.close();
  }

  private decide(delivered: boolean, statusCode: number | null, aborted: boolean, error: string | null): InterceptDecision {
    if (delivered) return { verdict: 'allow', outcome: 'allowed', detail: `HTTP ${statusCode}` };
    if (statusCode === 403) return { verdict: 'block', outcome: 'blocked', detail: 'HTTP 403' };
    // Only our own deadline aborts the request: the sender is given no other signal.
    if (aborted) return { verdict: this.onError, outcome: 'timeout', detail: `no answer within ${this.timeoutMs} ms` };
    return { verdict: this.onError, outcome: 'error', detail: error ?? `HTTP ${statusCode}` };
  }
}
