/**
 * The provider port: what the broker asks of a CPaaS provider, and how each answer is classified.
 * Adapters never throw for a provider outcome; they return a `ProviderResult` whose failure says
 * whether it is a call-setup failure that counts against the provider's breaker (docs/design.md#provider-breaker).
 *
 * Real vendors (docs/providers.md) shaped it: a vendor may keep no sessions of its own (`keepsSessions`),
 * signs its webhooks over the public URL it called (`WebhookRequest.url`), expects every webhook
 * answered in its own call-control language (`WebhookAnswer`), reports delivery and bridge
 * outcomes asynchronously (`StatusEvent`), and holds the numbers we import (`numbers`).
 */

/** How a bridged call's callee answered. Every one of them is a successful call setup. */
export type CallAnswer = 'completed' | 'busy' | 'no-answer' | 'declined' | 'canceled';

export const CALL_ANSWERS: readonly CallAnswer[] = ['completed', 'busy', 'no-answer', 'declined', 'canceled'];

/** The provider operations, as named in failure reasons, metrics and the simulator's call log. */
export type ProviderOperation = 'bind' | 'unbind' | 'sms' | 'call' | 'health' | 'numbers';

export type FailureCause =
  | 'transport'
  | 'timeout'
  | 'http-5xx'
  | 'rate-limited'
  | 'malformed'
  | 'rejected'
  | 'invalid-number'
  | 'bad-request'
  | 'auth'
  | 'account'
  | 'call-setup';

export interface ProviderFailure {
  /** True exactly for a call-setup failure (docs/design.md#provider-breaker); false when the caller's own input was at fault. */
  countsAgainstProvider: boolean;
  cause: FailureCause;
  /** One human line, e.g. "primary: HTTP 503 on bind": `${provider}: ${detail}`. Never holds a secret. */
  reason: string;
  /** The provider's configured name, which `reason` starts with ("primary"). */
  readonly provider: string;
  /** `reason` without the provider's name ("HTTP 503 on bind"): for a line that names the provider already. */
  readonly detail: string;
  /** The provider's HTTP status, when it answered. */
  status?: number;
  /** The vendor's own error code, when it gave one (Twilio `code`, e.g. 21211). */
  vendorCode?: string;
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
  /** The inbound call to connect, for a vendor that bridges by an API call (`bridgesByCall`, Infobip's dialogs). */
  inboundCallId?: string;
}

/** The broker's webhook routes, under `/v1/providers/:name/`. */
export type WebhookRoute = 'inbound/sms' | 'inbound/voice' | 'status';

export const WEBHOOK_ROUTES: readonly WebhookRoute[] = ['inbound/sms', 'inbound/voice', 'status'];

/** A webhook as the provider sent it. */
export interface WebhookRequest {
  /**
   * The full URL the provider called, as the provider saw it: `PUBLIC_URL` + path + query (vendors
   * sign over it), or the broker's own origin + path + query when `PUBLIC_URL` is unset.
   */
  url: string;
  method: string;
  route: WebhookRoute;
  headers: Record<string, string | string[] | undefined>;
  /** The exact bytes received. */
  rawBody: Buffer;
}

/** `missing`: no signature at all (401); `invalid`: a signature that does not verify (403). */
export type WebhookVerification = 'valid' | 'missing' | 'invalid';

/** An SMS or a call that a phone user sent to one of our proxy numbers. */
export type InboundEvent =
  | { channel: 'sms'; eventId: string; messageId: string; from: string; to: string; text: string; at: string }
  | { channel: 'voice'; eventId: string; callId: string; from: string; to: string; at: string };

/** Where a message we sent ended: delivered, or not (with the vendor's reason when it gave one). */
export type MessageOutcome = 'delivered' | 'undelivered' | 'failed';

/** What became of something we asked the provider to do. */
export type StatusEvent =
  | {
      type: 'message.delivered' | 'message.undelivered' | 'message.failed';
      eventId: string;
      messageId: string;
      from: string;
      to: string;
      at: string;
      /** The vendor's error code for an undelivered or failed message, e.g. Twilio 30003. */
      errorCode?: string;
    }
  /** A message still on its way (queued, sent, ...): nothing to record yet. */
  | { type: 'message.progress'; eventId: string; messageId: string; status: string; at: string }
  /** A call still on its way (ringing, answered), or a leg whose end is reported elsewhere: nothing to record. */
  | { type: 'call.progress'; eventId: string; callId: string; status: string; at: string }
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
    }
  /** The provider could not set up the bridge (Twilio `DialCallStatus=failed`): a call-setup failure (docs/providers.md). */
  | {
      type: 'call.failed';
      eventId: string;
      callId: string;
      bridgedCallId?: string;
      from: string;
      to: string;
      /** One human line, no secret. */
      reason: string;
      at: string;
    };

/** A provider's answer to a webhook, in the provider's own format (TwiML, NCCO, the simulator's JSON). */
export interface WebhookAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** What the broker did with an inbound SMS; the adapter turns it into the provider's answer. */
export type SmsOutcome =
  | { kind: 'relayed' | 'queued'; interactionId: string }
  /** Out of session: `reply` is the configured answer the adapter sends back inline, if it can. */
  | { kind: 'out-of-session'; reply?: string; replied?: boolean };

/** A number the vendor account holds, and where its webhooks point now. */
export interface ProviderNumber {
  /** The vendor's id for it (Twilio `PN…` sid). */
  id: string;
  /** E.164. */
  number: string;
  smsUrl: string | null;
  voiceUrl: string | null;
  statusCallback: string | null;
}

/** The broker's webhook URLs for one provider, built from `PUBLIC_URL` and the provider's name. */
export interface NumberWebhooks {
  smsUrl: string;
  voiceUrl: string;
  statusCallback: string;
}

/** Optional: a vendor whose numbers the broker can list and point at itself (the import). */
export interface NumberManagement {
  /** Every number of the account, all pages. */
  listNumbers(): Promise<ProviderResult<ProviderNumber[]>>;
  /** Points the number's inbound SMS, voice and status webhooks at the broker. */
  pointNumber(number: ProviderNumber, webhooks: NumberWebhooks): Promise<ProviderResult<void>>;
}

export interface CpaasProvider {
  readonly name: string;
  /**
   * True when the provider keeps sessions of its own (the simulator): a session is bound there.
   * False for Twilio and Vonage: the broker is the session store, and creating a session makes no
   * provider call (docs/design.md#sessions-and-the-pool-rule).
   */
  readonly keepsSessions: boolean;
  /** Present when the provider can list its numbers and point them at the broker. */
  readonly numbers?: NumberManagement;
  bindProxy(req: BindProxyRequest): Promise<ProviderResult<{ bindingId: string }>>;
  unbindProxy(req: UnbindProxyRequest): Promise<ProviderResult<void>>;
  sendSms(req: SendSmsRequest): Promise<ProviderResult<{ messageId: string }>>;
  /**
   * Places a call (or, with `inboundCallId`, bridges an inbound one): only a vendor that bridges by an API
   * call has it (`bridgesByCall`), and the simulator. Twilio, Vonage and Africa's Talking bridge in their
   * webhook's answer.
   */
  bridgeCall?(req: BridgeCallRequest): Promise<ProviderResult<{ callId: string; answer: CallAnswer }>>;
  healthCheck(): Promise<ProviderResult<void>>;
  /** Signature (and freshness, where the format has it) of a webhook the provider sent us; constant-time. */
  verifyWebhook(req: WebhookRequest): WebhookVerification;
  /**
   * For a vendor that posts several kinds of event to one URL (Africa's Talking's voice callback gets
   * the end of the call too; Infobip's call events all come to one subscription): the route this
   * webhook is really for. Absent: the route it came to.
   */
  webhookRoute?(req: WebhookRequest): WebhookRoute;
  /**
   * True when an inbound call is bridged by an API call (`bridgeCall` with `inboundCallId`, through the
   * breaker) rather than by the webhook's answer alone (Infobip's Calls API); the answer still follows.
   */
  readonly bridgesByCall?: boolean;
  /** Throws `InvalidWebhookError` on a body that is not a valid inbound event. */
  parseInbound(channel: 'sms' | 'voice', req: WebhookRequest): InboundEvent;
  /** Throws `InvalidWebhookError` on a body that is not a valid status event. */
  parseStatus(req: WebhookRequest): StatusEvent;
  /** True when the adapter answers an out-of-session SMS inline (TwiML `<Message>`); else the broker sends it. */
  readonly repliesInline: boolean;
  /** The answer to an inbound SMS webhook. */
  smsAnswer(outcome: SmsOutcome): WebhookAnswer;
  /**
   * The answer to an inbound call: connect it to `to`, showing `callerId`. `callId` is the inbound
   * call's id, for a vendor that reports the bridged leg apart from it (Vonage's connect `eventUrl`).
   */
  voiceBridgeInstruction(req: { to: string; callerId: string; callId: string }): WebhookAnswer;
  /** The answer to an inbound call that cannot be connected: say `text`, then hang up. */
  voiceSayInstruction(req: { text: string }): WebhookAnswer;
  /**
   * The answer when `OUT_OF_SESSION_REPLY=reject` and the sender has no session: the vendor's
   * refusal (TwiML `<Reject/>`, an empty `<Response/>`), or undefined for the broker's 404 problem.
   */
  noSessionAnswer(channel: 'sms' | 'voice'): WebhookAnswer | undefined;
  /** The answer to a status webhook; `matched` says whether it was about something we know. */
  statusAnswer(req: { matched: boolean }): WebhookAnswer;
  /** Releases the adapter's connections (keep-alive sockets); call once at shutdown. */
  close(): Promise<void>;
}

/** The path of a provider's webhook route on the broker, e.g. `/v1/providers/primary/inbound/sms`. */
export function webhookRoutePath(provider: string, route?: WebhookRoute): string {
  return `/v1/providers/${encodeURIComponent(provider)}${route ? `/${route}` : ''}`;
}

/** The broker's own webhook URLs for a provider, as the vendor must call them. */
export function providerWebhookUrls(publicUrl: string, provider: string): NumberWebhooks & { base: string } {
  const base = `${publicUrl.replace(/\/+$/, '')}${webhookRoutePath(provider)}`;
  return { base, smsUrl: `${base}/inbound/sms`, voiceUrl: `${base}/inbound/voice`, statusCallback: `${base}/status` };
}
