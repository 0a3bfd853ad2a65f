/**
 * The Vonage adapter (docs/providers.md#vonage): SMS through the Messages API, calls bridged by answering Vonage's
 * answer webhook with an NCCO `connect`, health from the account balance, numbers linked to the
 * broker's Vonage application. Vonage keeps no sessions: the broker is the session store, and a
 * session on Vonage needs no call to it. Every webhook is a JWT-signed JSON body (vonage-signature.ts).
 * Like the simulator's adapter, it never throws for what Vonage did.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { systemClock, type Clock } from '@app/clock';
import {
  providerWebhookUrls,
  type BindProxyRequest,
  type CpaasProvider,
  type InboundEvent,
  type NumberManagement,
  type NumberWebhooks,
  type ProviderNumber,
  type ProviderResult,
  type SendSmsRequest,
  type SmsOutcome,
  type StatusEvent,
  type UnbindProxyRequest,
  type WebhookAnswer,
  type WebhookRequest,
  type WebhookVerification,
} from '../provider';
import { InvalidWebhookError, ProviderCallFailure } from '../errors';
import { VonageApi } from './vonage-api';
import { connectNcco, nccoAnswer, talkNcco } from './vonage-ncco';
import { verifyVonageWebhook, VONAGE_SIGNATURE_TOLERANCE_SEC } from './vonage-signature';
import { parseVonageInbound, parseVonageStatus } from './vonage-webhooks';

export interface VonageProviderAdapterOptions {
  name: string;
  /** Overrides Vonage's API bases (`name=vonage:https://host`). */
  baseUrl?: string;
  apiKey: string;
  apiSecret: string;
  applicationId: string;
  /** PEM of the application's private key; when set, SMS are sent with the application's JWT. */
  privateKey?: string;
  signatureSecret: string;
  /** `PUBLIC_URL`: where Vonage reaches the broker. */
  publicUrl: string;
  timeoutMs: number;
  clock?: Clock;
  signatureToleranceSec?: number;
}

/** The query parameter of the connect `eventUrl` that ties the bridged leg's events to the inbound call. */
export const VONAGE_BRIDGED_CALL_PARAM = 'call';
/**
 * Beside it, the broker's own tag of that call (an HMAC under the signature secret): Vonage's JWT covers the
 * body, not the URL, so without it a signed event of one call, posted with another call's id, would settle
 * that other call.
 */
export const VONAGE_BRIDGED_CALL_TAG_PARAM = 'call_tag';

export class VonageProviderAdapter implements CpaasProvider {
  readonly name: string;
  readonly keepsSessions = false;
  /** A Messages API webhook takes no reply in its answer: the broker sends an out-of-session reply itself. */
  readonly repliesInline = false;
  readonly numbers: NumberManagement;
  private readonly api: VonageApi;
  private readonly clock: Clock;
  private readonly webhooks: NumberWebhooks;

  constructor(private readonly options: VonageProviderAdapterOptions) {
    this.name = options.name;
    this.clock = options.clock ?? systemClock;
    this.webhooks = providerWebhookUrls(options.publicUrl, options.name);
    this.api = new VonageApi({
      name: options.name,
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      apiSecret: options.apiSecret,
      applicationId: options.applicationId,
      privateKey: options.privateKey,
      timeoutMs: options.timeoutMs,
    });
    this.numbers = { listNumbers: () => this.listNumbers(), pointNumber: (number) => this.pointNumber(number) };
  }

  /** Never called for a provider without sessions (`keepsSessions`); refused without a vendor call, not counted. */
  bindProxy(_req: BindProxyRequest): Promise<ProviderResult<{ bindingId: string }>> {
    return Promise.resolve(this.notVendorOperation('bind'));
  }

  /** Nothing is bound at Vonage, so there is nothing to release. */
  unbindProxy(_req: UnbindProxyRequest): Promise<ProviderResult<void>> {
    return Promise.resolve({ ok: true, value: undefined, latencyMs: 0 });
  }

  sendSms(req: SendSmsRequest): Promise<ProviderResult<{ messageId: string }>> {
    return this.api.sendSms({ ...req, webhookUrl: this.webhooks.statusCallback });
  }

  async healthCheck(): Promise<ProviderResult<void>> {
    const balance = await this.api.balance();
    return balance.ok ? { ok: true, value: undefined, latencyMs: balance.latencyMs } : balance;
  }

  verifyWebhook(req: WebhookRequest): WebhookVerification {
    return verifyVonageWebhook({
      signatureSecret: this.options.signatureSecret,
      headers: req.headers,
      rawBody: req.rawBody,
      nowMs: this.clock.now(),
      applicationId: this.options.applicationId,
      apiKey: this.options.apiKey,
      toleranceSec: this.options.signatureToleranceSec ?? VONAGE_SIGNATURE_TOLERANCE_SEC,
    });
  }

  parseInbound(channel: 'sms' | 'voice', req: WebhookRequest): InboundEvent {
    return parseVonageInbound(channel, req.rawBody, this.receivedAt());
  }

  parseStatus(req: WebhookRequest): StatusEvent {
    const event = parseVonageStatus(req.rawBody, this.receivedAt());
    if (event.kind === 'message') {
      const { eventId, messageId, from, to, at } = event;
      switch (event.status) {
        case 'delivered':
          return { type: 'message.delivered', eventId, messageId, from, to, at };
        case 'rejected':
          return { type: 'message.failed', eventId, messageId, from, to, at, ...(event.error ? { errorCode: event.error } : {}) };
        case 'undeliverable':
          return { type: 'message.undelivered', eventId, messageId, from, to, at, ...(event.error ? { errorCode: event.error } : {}) };
        default:
          return { type: 'message.progress', eventId, messageId, status: event.status, at };
      }
    }
    // The bridged leg's events come to the connect eventUrl, which names the inbound call; events
    // without it are the inbound leg's own (the application's event URL): progress only.
    const query = new URL(req.url).searchParams;
    const inboundCallId = query.get(VONAGE_BRIDGED_CALL_PARAM);
    if (inboundCallId !== null && !this.taggedByUs(inboundCallId, query.get(VONAGE_BRIDGED_CALL_TAG_PARAM)))
      throw new InvalidWebhookError(
        `${VONAGE_BRIDGED_CALL_PARAM} must name a call this broker bridged, with its tag`,
        VONAGE_BRIDGED_CALL_PARAM,
      );
    const { eventId, from, to, at } = event;
    if (!inboundCallId || event.outcome.type === 'progress')
      return { type: 'call.progress', eventId, callId: inboundCallId ?? event.callId, status: event.status, at };
    const ids = { callId: inboundCallId, bridgedCallId: event.callId };
    if (event.outcome.type === 'setup-failed')
      return { type: 'call.failed', eventId, ...ids, from, to, reason: 'Vonage could not set up the bridged call (status failed)', at };
    return { type: 'call.completed', eventId, ...ids, from, to, answer: event.outcome.answer, durationSec: event.durationSec, at };
  }

  /** Vonage needs a 2xx, or it sends the webhook again; the body is not read. */
  smsAnswer(outcome: SmsOutcome): WebhookAnswer {
    return json({ result: outcome.kind });
  }

  voiceBridgeInstruction(req: { to: string; callerId: string; callId: string }): WebhookAnswer {
    const eventUrl = new URL(this.webhooks.statusCallback);
    eventUrl.searchParams.set(VONAGE_BRIDGED_CALL_PARAM, req.callId);
    eventUrl.searchParams.set(VONAGE_BRIDGED_CALL_TAG_PARAM, this.callTag(req.callId));
    return nccoAnswer(connectNcco({ to: req.to, callerId: req.callerId, eventUrl: eventUrl.toString() }));
  }

  voiceSayInstruction(req: { text: string }): WebhookAnswer {
    return nccoAnswer(talkNcco(req.text));
  }

  /**
   * No session (`OUT_OF_SESSION_REPLY=reject`): the broker's 404 problem, for an SMS and a call
   * alike. Vonage ends such a call; it sends such an SMS again for a while, and each retry gets the
   * same 404 (nothing is relayed, and the retries show up in the broker's logs).
   */
  noSessionAnswer(_channel: 'sms' | 'voice'): WebhookAnswer | undefined {
    return undefined;
  }

  statusAnswer(req: { matched: boolean }): WebhookAnswer {
    return json({ matched: req.matched });
  }

  close(): Promise<void> {
    return this.api.close();
  }

  private async listNumbers(): Promise<ProviderResult<ProviderNumber[]>> {
    const listed = await this.api.listNumbers();
    if (!listed.ok) return listed;
    const { applicationId } = this.options;
    // A number linked to our application sends its SMS and calls to the application's webhooks,
    // which point at the broker (docs/providers.md); anything else is named as it is.
    const pointed = (value: string | undefined, url: string): string | null =>
      value === undefined ? null : value === applicationId ? url : `application ${value}`;
    const numbers = listed.value.map((n): ProviderNumber => ({
      id: `${n.country}:${n.msisdn}`,
      number: `+${n.msisdn}`,
      smsUrl: pointed(n.messagesCallbackValue, this.webhooks.smsUrl),
      voiceUrl: n.voiceCallbackType === 'app' ? pointed(n.voiceCallbackValue, this.webhooks.voiceUrl) : null,
      statusCallback: n.voiceCallbackType === 'app' ? pointed(n.voiceCallbackValue, this.webhooks.statusCallback) : null,
    }));
    return { ok: true, value: numbers, latencyMs: listed.latencyMs };
  }

  private pointNumber(number: ProviderNumber): Promise<ProviderResult<void>> {
    const [country, msisdn] = number.id.split(':');
    return this.api.linkNumber({ country, msisdn }, this.webhooks.statusCallback);
  }

  private callTag(callId: string): string {
    return createHmac('sha256', this.options.signatureSecret).update(`bridged-call:${callId}`).digest('base64url');
  }

  private taggedByUs(callId: string, tag: string | null): boolean {
    if (tag === null) return false;
    const expected = Buffer.from(this.callTag(callId));
    const given = Buffer.from(tag);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private notVendorOperation<T>(operation: 'bind'): ProviderResult<T> {
    return {
      ok: false,
      failure: new ProviderCallFailure(
        this.name,
        { countsAgainstProvider: false, cause: 'bad-request' },
        `Vonage has no ${operation} operation`,
      ),
      latencyMs: 0,
    };
  }

  private receivedAt(): string {
    return new Date(this.clock.now()).toISOString();
  }
}

function json(body: object): WebhookAnswer {
  return { status: 200, contentType: 'application/json', body: JSON.stringify(body) };
}
