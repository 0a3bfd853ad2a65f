/**
 * The Infobip adapter (docs/providers.md#infobip): SMS through `POST /sms/3/messages`, inbound calls
 * bridged through the Calls API (a `CALL_RECEIVED` event, answered by `POST /calls/1/dialogs` whose
 * child call shows the proxy number; the dialog's end settles it), health from `GET /account/1/balance`.
 * Every request carries `Authorization: App <API key>`. Infobip keeps no sessions. Its webhooks are
 * authenticated by the provider's secret token in the URLs the broker gives it (webhook-token.ts):
 * the Number Masking product's own `Authorization` recipe could not be confirmed from Infobip's
 * published material, so it is not relied on (docs/providers.md#infobip). Never throws for what
 * Infobip did.
 */
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { systemClock, type Clock } from '@app/clock';
import {
  providerWebhookUrls,
  type BindProxyRequest,
  type BridgeCallRequest,
  type CallAnswer,
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
import { parseObject } from '../transport-errors';
import { callVendor, failedCall, type Reading } from '../vendor-request';
import { tokenWebhooks, verifyWebhookToken } from '../webhook-token';
import { infobipHttpRule, infobipRejectedRule } from './infobip-outcomes';
import { infobipEventType, parseInfobipInbound, parseInfobipStatus } from './infobip-webhooks';

export const INFOBIP_API_BASE = 'https://api.infobip.com';

export interface InfobipProviderAdapterOptions {
  name: string;
  apiKey: string;
  webhookToken: string;
  publicUrl: string;
  /** The account's own base URL (`https://xxxxx.api.infobip.com`), or a test server. */
  baseUrl?: string;
  timeoutMs: number;
  clock?: Clock;
}

const MAX_ANSWER_BYTES = 256 * 1024;

/** Infobip numbers are digits without `+`. */
const digits = (e164: string): string => e164.replace(/^\+/, '');

export class InfobipProviderAdapter implements CpaasProvider {
  readonly name: string;
  readonly keepsSessions = false;
  readonly repliesInline = false;
  readonly bridgesByCall = true;
  /** The URLs to give Infobip (inbound SMS forwarding, the Calls subscription, delivery reports), token included. */
  readonly webhooks: NumberWebhooks;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly authorization: string;
  private readonly agent: Agent;
  private readonly clock: Clock;

  constructor(private readonly options: InfobipProviderAdapterOptions) {
    this.name = options.name;
    const base = new URL(options.baseUrl ?? INFOBIP_API_BASE);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.authorization = `App ${options.apiKey}`;
    this.webhooks = tokenWebhooks(providerWebhookUrls(options.publicUrl, options.name), options.webhookToken);
    this.clock = options.clock ?? systemClock;
    this.agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000, connections: 64 });
  }

  bindProxy(_req: BindProxyRequest): Promise<ProviderResult<{ bindingId: string }>> {
    return Promise.resolve({
      ok: false,
      failure: new ProviderCallFailure(this.name, { countsAgainstProvider: false, cause: 'bad-request' }, 'Infobip has no bind operation'),
      latencyMs: 0,
    });
  }

  unbindProxy(_req: UnbindProxyRequest): Promise<ProviderResult<void>> {
    return Promise.resolve({ ok: true, value: undefined, latencyMs: 0 });
  }

  /** SmsRequest → SmsMessage (sender, destinations[].to, content.text, webhooks.delivery.url). */
  async sendSms(req: SendSmsRequest): Promise<ProviderResult<{ messageId: string }>> {
    const started = performance.now();
    const body = {
      messages: [
        {
          sender: digits(req.from),
          destinations: [{ to: digits(req.to) }],
          content: { text: req.text },
          webhooks: { delivery: { url: this.webhooks.statusCallback } },
        },
      ],
    };
    const sent = await this.call('sms', 'POST', '/sms/3/messages', body, readMessage);
    if (!sent.ok || !('rejected' in sent.value)) return sent as ProviderResult<{ messageId: string }>;
    const rule = infobipRejectedRule(sent.value.rejected);
    return failedCall<{ messageId: string }>(
      this.name,
      'sms',
      started,
    )(
      { countsAgainstProvider: rule.countsAgainstProvider, cause: rule.cause, status: 200, vendorCode: sent.value.rejected },
      `HTTP 200 with message status ${sent.value.rejected} (${rule.meaning})`,
    );
  }

  /**
   * The bridge of an inbound call: a dialog (CallsDialogRequest) whose parent is the inbound call and
   * whose child calls `to` from the proxy number. Its outcome comes later as a dialog event.
   */
  bridgeCall(req: BridgeCallRequest): Promise<ProviderResult<{ callId: string; answer: CallAnswer }>> {
    if (!req.inboundCallId)
      return Promise.resolve({
        ok: false,
        failure: new ProviderCallFailure(
          this.name,
          { countsAgainstProvider: false, cause: 'bad-request' },
          'Infobip bridges only inbound calls on call',
        ),
        latencyMs: 0,
      });
    const body = {
      parentCallId: req.inboundCallId,
      childCallRequest: { endpoint: { type: 'PHONE', phoneNumber: digits(req.to) }, from: digits(req.from) },
    };
    return this.call<{ callId: string; answer: CallAnswer }>('call', 'POST', '/calls/1/dialogs', body, (answer) => {
      if (answer.id === undefined || answer.id === null || answer.id === '') return { rejected: 'without a dialog id' };
      if (typeof answer.id !== 'string') return { malformed: 'a dialog id that is not a string' };
      // The dialog is being set up; how the callee answers comes with DIALOG_FINISHED / DIALOG_FAILED.
      return { value: { callId: answer.id, answer: 'completed' } };
    });
  }

  healthCheck(): Promise<ProviderResult<void>> {
    return this.call('health', 'GET', '/account/1/balance', undefined, (answer) => {
      if (typeof answer.balance !== 'number') return { malformed: 'a balance that is not a number' };
      return answer.balance > 0 ? { value: undefined } : { rejected: `with balance ${answer.balance}` };
    });
  }

  verifyWebhook(req: WebhookRequest): WebhookVerification {
    return verifyWebhookToken(this.options.webhookToken, req.url);
  }

  /** Every Calls API event comes to the voice URL; only CALL_RECEIVED is a call to answer. */
  webhookRoute(req: WebhookRequest): WebhookRoute {
    if (req.route !== 'inbound/voice') return req.route;
    const type = infobipEventType(req.rawBody);
    return type !== undefined && type !== 'CALL_RECEIVED' ? 'status' : req.route;
  }

  parseInbound(channel: 'sms' | 'voice', req: WebhookRequest): InboundEvent {
    return parseInfobipInbound(channel, req.rawBody, this.now());
  }

  parseStatus(req: WebhookRequest): StatusEvent {
    return parseInfobipStatus(req.rawBody, this.now());
  }

  smsAnswer(outcome: SmsOutcome): WebhookAnswer {
    return json({ result: outcome.kind });
  }

  /** The bridge was asked for by `bridgeCall`; Infobip reads nothing from this answer. */
  voiceBridgeInstruction(_req: { to: string; callerId: string; callId: string }): WebhookAnswer {
    return json({ result: 'bridging' });
  }

  /** The Calls API speaks only through API calls; the call is left to ring out (docs/providers.md#infobip). */
  voiceSayInstruction(_req: { text: string }): WebhookAnswer {
    return json({ result: 'not-connected' });
  }

  noSessionAnswer(_channel: 'sms' | 'voice'): WebhookAnswer {
    return json({ result: 'no-session' });
  }

  statusAnswer(req: { matched: boolean }): WebhookAnswer {
    return json({ matched: req.matched });
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private call<T>(
    operation: ProviderOperation,
    method: Dispatcher.HttpMethod,
    path: string,
    body: object | undefined,
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
          authorization: this.authorization,
          'user-agent': 'session-broker',
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      },
      timeoutMs: this.options.timeoutMs,
      maxAnswerBytes: MAX_ANSWER_BYTES,
      refusal: (status, text) => ({ ...infobipHttpRule(status), said: describeError(parseObject(text)) }),
      read,
    });
  }
}

/** SmsResponse.messages[0]: SmsResponseDetails (messageId, status: SmsMessageStatus). */
function readMessage(answer: Record<string, unknown>): Reading<{ messageId: string } | { rejected: string }> {
  if (!Array.isArray(answer.messages)) return { malformed: 'an answer without messages' };
  const message = answer.messages[0] as { messageId?: unknown; status?: { groupName?: unknown; name?: unknown } } | undefined;
  if (!message) return { rejected: 'without a message' };
  const group = message.status?.groupName;
  if (group === 'REJECTED')
    return { value: { rejected: typeof message.status?.name === 'string' ? message.status.name.slice(0, 64) : 'REJECTED' } };
  if (typeof message.messageId !== 'string' || message.messageId === '') return { rejected: 'without a messageId' };
  return { value: { messageId: message.messageId } };
}

/** Infobip's error body (ApiError, or the older requestError.serviceException), cut to one line. */
function describeError(body: Record<string, unknown> | undefined): string | undefined {
  if (!body) return undefined;
  const exception = (body.requestError as { serviceException?: { messageId?: unknown; text?: unknown } } | undefined)?.serviceException;
  const parts = [body.errorCode, body.description, exception?.messageId, exception?.text].filter(
    (part): part is string => typeof part === 'string' && part.length > 0,
  );
  return parts.length ? parts.join(': ').slice(0, 160) : undefined;
}

function json(body: object): WebhookAnswer {
  return { status: 200, contentType: 'application/json', body: JSON.stringify(body) };
}
