/**
 * The provider port: what the broker asks of a CPaaS provider, and how each answer is classified.
 * Adapters never throw for a provider outcome; they return a `ProviderResult` whose failure says
 * whether it is a call-setup failure that counts against the provider's breaker (SPEC §2).
 */

/** How a bridged call's callee answered. Every one of them is a successful call setup. */
export type CallAnswer = 'completed' | 'busy' | 'no-answer' | 'declined';

export const CALL_ANSWERS: readonly CallAnswer[] = ['completed', 'busy', 'no-answer', 'declined'];

/** The provider operations, as named in failure reasons and in the simulator's call log. */
export type ProviderOperation = 'bind' | 'unbind' | 'sms' | 'call' | 'health';

export type FailureCause =
  'transport' | 'timeout' | 'http-5xx' | 'rate-limited' | 'malformed' | 'rejected' | 'invalid-number' | 'bad-request';

export interface ProviderFailure {
  /** True exactly for a call-setup failure (SPEC §2); false when the caller's own input was at fault. */
  countsAgainstProvider: boolean;
  cause: FailureCause;
  /** One human line, e.g. "primary: HTTP 503 on bind". */
  reason: string;
  /** The provider's HTTP status, when it answered. */
  status?: number;
}

export type ProviderResult<T> = { ok: true; value: T; latencyMs: number } | { ok: false; failure: ProviderFailure; latencyMs: number };

export interface BindProxyRequest {
  sessionId: string;
  proxyNumber: string;
  participants: [string, string];
}

export interface UnbindProxyRequest {
  sessionId: string;
  proxyNumber: string;
  bindingId: string;
}

export interface SendSmsRequest {
  from: string;
  to: string;
  text: string;
}

export interface BridgeCallRequest {
  from: string;
  to: string;
}

export interface WebhookRequest {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

/** An SMS or a call that a phone user sent to one of our proxy numbers. */
export type InboundEvent =
  | { channel: 'sms'; eventId: string; messageId: string; from: string; to: string; text: string; at: string }
  | { channel: 'voice'; eventId: string; callId: string; from: string; to: string; at: string };

/** What became of something we asked the provider to do. */
export type StatusEvent =
  | { type: 'message.delivered'; eventId: string; messageId: string; from: string; to: string; at: string }
  | {
      type: 'call.completed';
      eventId: string;
      /** The call the provider told us about: an inbound call's id, or the id `bridgeCall` returned. */
      callId: string;
      /** The outbound leg placed for an inbound call's bridge instruction. */
      bridgedCallId?: string;
      from: string;
      to: string;
      answer: CallAnswer;
      durationSec: number;
      at: string;
    };

/** A provider's answer to an inbound call webhook, in the provider's own format (like TwiML). */
export interface VoiceInstruction {
  contentType: string;
  body: string;
}

export interface CpaasProvider {
  readonly name: string;
  bindProxy(req: BindProxyRequest): Promise<ProviderResult<{ bindingId: string }>>;
  unbindProxy(req: UnbindProxyRequest): Promise<ProviderResult<void>>;
  sendSms(req: SendSmsRequest): Promise<ProviderResult<{ messageId: string }>>;
  bridgeCall(req: BridgeCallRequest): Promise<ProviderResult<{ callId: string; answer: CallAnswer }>>;
  healthCheck(): Promise<ProviderResult<void>>;
  /** Signature and freshness of a webhook the provider sent us; constant-time. */
  verifyWebhook(req: WebhookRequest): boolean;
  /** Throws `InvalidWebhookError` on a body that is not a valid inbound event. */
  parseInbound(channel: 'sms' | 'voice', body: unknown): InboundEvent;
  /** Throws `InvalidWebhookError` on a body that is not a valid status event. */
  parseStatus(body: unknown): StatusEvent;
  /** The answer to an inbound call: connect it to `to`, showing `callerId`. */
  voiceBridgeInstruction(req: { to: string; callerId: string }): VoiceInstruction;
  /** The answer to an inbound call that cannot be connected: say `text`, then hang up. */
  voiceSayInstruction(req: { text: string }): VoiceInstruction;
  /** Releases the adapter's connections (keep-alive sockets); call once at shutdown. */
  close(): Promise<void>;
}

/** Milliseconds since the epoch; RxJS schedulers fit (`scheduler.now()`). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
