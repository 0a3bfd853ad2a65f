/**
 * The Africa's Talking adapter (docs/providers.md#africas-talking): SMS through the SMS API
 * (`POST /version1/messaging`, form-encoded, `apikey` header), inbound calls bridged by answering the
 * voice callback with Voice XML `<Dial phoneNumbers callerId>`, the end of each call (the same
 * callback, `isActive=0`) fed to the breaker, health from the account read (`GET /version1/user`).
 * Africa's Talking keeps no sessions and signs no webhook: its callback URLs carry the provider's
 * secret token (webhook-token.ts). It has no numbers API: an operator adds its numbers with their
 * real capabilities (docs/providers.md#nigeria). Like every adapter, it never throws for what the
 * vendor did.
 */
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { systemClock, type Clock } from '@app/clock';
import {
  providerWebhookUrls,
  type BindProxyRequest,
  type CpaasProvider,
  type InboundEvent,
  type NumberWebhooks,
  type ProviderOperation,
  type ProviderResult,
  type SendSmsRequest,
  type SmsOutcome,
  type StatusEvent,
  type UnbindProxyRequest,
  type WebhookAnswer,
  type WebhookRequest,
  type WebhookRoute,
  type WebhookVerification,
} from '../provider';
import { ProviderCallFailure } from '../errors';
import { callVendor, failedCall, type Reading } from '../vendor-request';
import { tokenWebhooks, verifyWebhookToken } from '../webhook-token';
import { AFRICASTALKING_ACCEPTED_CODES, africasTalkingHttpRule, africasTalkingRecipientRule } from './africastalking-outcomes';
import { dialXml, emptyXml, rejectXml, sayXml, xmlAnswer } from './africastalking-voice-xml';
import { africasTalkingParams, isEndOfCall, parseAfricasTalkingInbound, parseAfricasTalkingStatus } from './africastalking-webhooks';

export const AFRICASTALKING_API_BASE = 'https://api.africastalking.com';

export interface AfricasTalkingProviderAdapterOptions {
  name: string;
  /** The application's username (`sandbox` in the sandbox). */
  username: string;
  apiKey: string;
  /** The secret the broker's callback URLs carry (`PROVIDER_<NAME>_WEBHOOK_TOKEN`). */
  webhookToken: string;
  publicUrl: string;
  /** Overrides `https://api.africastalking.com` (tests, the sandbox's `https://api.sandbox.africastalking.com`). */
  baseUrl?: string;
  timeoutMs: number;
  clock?: Clock;
}

const MAX_ANSWER_BYTES = 256 * 1024;

export class AfricasTalkingProviderAdapter implements CpaasProvider {
  readonly name: string;
  readonly keepsSessions = false;
  /** A webhook answer carries no SMS reply: the broker sends an out-of-session reply itself. */
  readonly repliesInline = false;
  /** The URLs to register in the Africa's Talking dashboard (no API sets them), token included. */
  readonly webhooks: NumberWebhooks;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly agent: Agent;
  private readonly clock: Clock;

  constructor(private readonly options: AfricasTalkingProviderAdapterOptions) {
    this.name = options.name;
    const base = new URL(options.baseUrl ?? AFRICASTALKING_API_BASE);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.webhooks = tokenWebhooks(providerWebhookUrls(options.publicUrl, options.name), options.webhookToken);
    this.clock = options.clock ?? systemClock;
    this.agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000, connections: 64 });
  }

  /** Never called for a provider without sessions (`keepsSessions`); refused without a vendor call, not counted. */
  bindProxy(_req: BindProxyRequest): Promise<ProviderResult<{ bindingId: string }>> {
    return Promise.resolve(this.notVendorOperation('bind'));
  }

  unbindProxy(_req: UnbindProxyRequest): Promise<ProviderResult<void>> {
    return Promise.resolve({ ok: true, value: undefined, latencyMs: 0 });
  }

  /** One recipient per send, as the `africastalking` package sends it (bulk mode). */
  async sendSms(req: SendSmsRequest): Promise<ProviderResult<{ messageId: string }>> {
    const started = performance.now();
    const form = { username: this.options.username, to: req.to, message: req.text, from: req.from, bulkSMSMode: '1' };
    const sent = await this.call('sms', 'POST', '/version1/messaging', form, readRecipient);
    if (!sent.ok || !('refused' in sent.value)) return sent as ProviderResult<{ messageId: string }>;
    // A 201 whose recipient was not taken: its status code says whose fault that is.
    const code = sent.value.refused;
    const rule = africasTalkingRecipientRule(code);
    return failedCall<{ messageId: string }>(
      this.name,
      'sms',
      started,
    )(
      { countsAgainstProvider: rule.countsAgainstProvider, cause: rule.cause, status: 201, vendorCode: String(code) },
      `HTTP 201 with recipient status ${code} (${rule.meaning})`,
    );
  }

  /** The account read: proves the API and the key work; an empty balance cannot carry a call or a text. */
  healthCheck(): Promise<ProviderResult<void>> {
    return this.call('health', 'GET', `/version1/user?${new URLSearchParams({ username: this.options.username })}`, undefined, (answer) => {
      const balance = (answer.UserData as { balance?: unknown } | undefined)?.balance;
      if (typeof balance !== 'string') return { malformed: 'a user without UserData.balance' };
      const amount = Number(/(-?\d+(?:\.\d+)?)/.exec(balance)?.[1]);
      if (Number.isNaN(amount)) return { malformed: 'a balance that is not an amount' };
      return amount > 0 ? { value: undefined } : { rejected: `with balance "${balance.slice(0, 24)}"` };
    });
  }

  verifyWebhook(req: WebhookRequest): WebhookVerification {
    return verifyWebhookToken(this.options.webhookToken, req.url);
  }

  /** The end of a call comes to the voice callback URL it was answered on. */
  webhookRoute(req: WebhookRequest): WebhookRoute {
    return req.route === 'inbound/voice' && isEndOfCall(africasTalkingParams(req.rawBody)) ? 'status' : req.route;
  }

  parseInbound(channel: 'sms' | 'voice', req: WebhookRequest): InboundEvent {
    return parseAfricasTalkingInbound(channel, africasTalkingParams(req.rawBody), this.now());
  }

  parseStatus(req: WebhookRequest): StatusEvent {
    return parseAfricasTalkingStatus(africasTalkingParams(req.rawBody), this.now());
  }

  smsAnswer(_outcome: SmsOutcome): WebhookAnswer {
    return xmlAnswer(emptyXml());
  }

  voiceBridgeInstruction(req: { to: string; callerId: string }): WebhookAnswer {
    return xmlAnswer(dialXml({ to: req.to, callerId: req.callerId }));
  }

  voiceSayInstruction(req: { text: string }): WebhookAnswer {
    return xmlAnswer(sayXml(req.text));
  }

  noSessionAnswer(channel: 'sms' | 'voice'): WebhookAnswer {
    return xmlAnswer(channel === 'voice' ? rejectXml() : emptyXml());
  }

  statusAnswer(): WebhookAnswer {
    return xmlAnswer(emptyXml());
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private notVendorOperation<T>(operation: 'bind'): ProviderResult<T> {
    return {
      ok: false,
      failure: new ProviderCallFailure(
        this.name,
        { countsAgainstProvider: false, cause: 'bad-request' },
        `Africa's Talking has no ${operation} operation`,
      ),
      latencyMs: 0,
    };
  }

  private call<T>(
    operation: ProviderOperation,
    method: Dispatcher.HttpMethod,
    path: string,
    form: Record<string, string> | undefined,
    read: (answer: Record<string, unknown>) => Reading<T>,
  ): Promise<ProviderResult<T>> {
    return callVendor({
      provider: this.name,
      operation,
      agent: this.agent,
      request: {
        origin: this.origin,
        path: `${this.basePath}${path}`,
        method,
        headers: {
          accept: 'application/json',
          apikey: this.options.apiKey,
          'user-agent': 'session-broker',
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: form ? new URLSearchParams(form).toString() : undefined,
      },
      timeoutMs: this.options.timeoutMs,
      maxAnswerBytes: MAX_ANSWER_BYTES,
      // The API answers errors as a short text line (never a credential).
      refusal: (status, text) => ({ ...africasTalkingHttpRule(status), said: text.trim().replace(/\s+/g, ' ').slice(0, 160) }),
      read,
    });
  }
}

/** The one recipient of a send: its message id when taken, its status code when not. */
function readRecipient(answer: Record<string, unknown>): Reading<{ messageId: string } | { refused: number }> {
  const data = answer.SMSMessageData as { Recipients?: unknown } | undefined;
  if (!data || typeof data !== 'object') return { malformed: 'an answer without SMSMessageData' };
  if (!Array.isArray(data.Recipients)) return { malformed: 'SMSMessageData without Recipients' };
  // No recipient: the message was not taken for anyone (Africa's Talking says why in `Message`).
  if (data.Recipients.length === 0) return { rejected: 'without a recipient' };
  const recipient = data.Recipients[0] as { statusCode?: unknown; messageId?: unknown };
  if (typeof recipient?.statusCode !== 'number') return { malformed: 'a recipient without a statusCode' };
  if (!AFRICASTALKING_ACCEPTED_CODES.includes(recipient.statusCode)) return { value: { refused: recipient.statusCode } };
  if (typeof recipient.messageId !== 'string' || recipient.messageId === '' || recipient.messageId === 'None')
    return { rejected: 'without a messageId' };
  return { value: { messageId: recipient.messageId } };
}
