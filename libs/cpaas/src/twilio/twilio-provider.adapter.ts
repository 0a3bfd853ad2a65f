/**
 * The Twilio adapter (Programmable Messaging + Voice, API 2010-04-01) behind the provider port.
 * Twilio keeps no sessions: the broker is the session store, a relayed SMS is a
 * `Messages.json` POST from the proxy number, and an inbound call is answered with TwiML that
 * dials the other participant showing the proxy number (docs/design.md#provider-adapters-and-webhook-verification). Every request is
 * form-encoded with HTTP Basic auth, goes over keep-alive connections, is aborted after
 * `timeoutMs`, and its answer is classified by TWILIO_OUTCOMES; nothing here throws for what
 * Twilio did, and no failure reason carries a credential.
 */
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { systemClock, type Clock } from '@app/clock';
import {
  providerWebhookUrls,
  type CpaasProvider,
  type InboundEvent,
  type NumberManagement,
  type NumberWebhooks,
  type ProviderNumber,
  type ProviderOperation,
  type ProviderResult,
  type SendSmsRequest,
  type SmsOutcome,
  type StatusEvent,
  type WebhookAnswer,
  type WebhookRequest,
  type WebhookVerification,
} from '../provider';
import { ProviderCallFailure } from '../errors';
import { parseObject } from '../transport-errors';
import { failedCall, readSuccess, requestWithin, type Reading } from '../vendor-request';
import { dialTwiml, emptyTwiml, messageTwiml, rejectTwiml, sayTwiml, twimlAnswer } from './twiml';
import { twilioOutcome } from './twilio-outcomes';
import { parseTwilioInbound, parseTwilioStatus, twilioParams, verifyTwilioWebhook } from './twilio-webhooks';

export const TWILIO_API_BASE = 'https://api.twilio.com';

export interface TwilioProviderAdapterOptions {
  /** The provider's name in the broker (`PROVIDERS`), part of its webhook URLs. */
  name: string;
  accountSid: string;
  authToken: string;
  /** `PUBLIC_URL`: Twilio calls the broker's webhooks there (StatusCallback, `<Dial action>`). */
  publicUrl: string;
  /** Overrides `https://api.twilio.com` (tests, regional edges). */
  baseUrl?: string;
  timeoutMs: number;
  clock?: Clock;
}

/** Largest Twilio answer we read; a number list page of 1000 numbers is well under it. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Numbers per list page (Twilio's maximum), and a bound on pages so a looping `next_page_uri` ends. */
const NUMBERS_PAGE_SIZE = 1000;
const MAX_NUMBER_PAGES = 100;

export class TwilioProviderAdapter implements CpaasProvider {
  readonly name: string;
  readonly keepsSessions = false;
  readonly repliesInline = true;
  readonly numbers: NumberManagement;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly accountPath: string;
  private readonly authorization: string;
  private readonly webhooks: NumberWebhooks;
  private readonly agent: Agent;
  private readonly clock: Clock;

  constructor(private readonly options: TwilioProviderAdapterOptions) {
    this.name = options.name;
    const base = new URL(options.baseUrl ?? TWILIO_API_BASE);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.accountPath = `/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}`;
    this.authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
    this.webhooks = providerWebhookUrls(options.publicUrl, options.name);
    this.clock = options.clock ?? systemClock;
    this.agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000, connections: 128 });
    this.numbers = { listNumbers: () => this.listNumbers(), pointNumber: (number, webhooks) => this.pointNumber(number, webhooks) };
  }

  /** Twilio keeps no sessions; the broker never binds (keepsSessions is false), so there is nothing to ask. */
  bindProxy(req: { sessionId: string }): Promise<ProviderResult<{ bindingId: string }>> {
    return Promise.resolve({ ok: true, value: { bindingId: req.sessionId }, latencyMs: 0 });
  }

  unbindProxy(): Promise<ProviderResult<void>> {
    return Promise.resolve({ ok: true, value: undefined, latencyMs: 0 });
  }

  sendSms(req: SendSmsRequest): Promise<ProviderResult<{ messageId: string }>> {
    const form = { To: req.to, From: req.from, Body: req.text, StatusCallback: this.webhooks.statusCallback };
    return this.call('sms', 'POST', `${this.accountPath}/Messages.json`, form, (answer) => {
      const sid = sidField(answer);
      return 'value' in sid ? { value: { messageId: sid.value } } : sid;
    });
  }

  /** The account resource: proves the API and the credentials work, and that the account is active. */
  healthCheck(): Promise<ProviderResult<void>> {
    return this.call('health', 'GET', `${this.accountPath}.json`, undefined, (answer) => {
      if (typeof answer.status !== 'string') return { malformed: 'an account without a status' };
      return answer.status === 'active' ? { value: undefined } : { rejected: `with account status "${answer.status.slice(0, 20)}"` };
    });
  }

  verifyWebhook(req: WebhookRequest): WebhookVerification {
    return verifyTwilioWebhook(this.options.authToken, req);
  }

  parseInbound(channel: 'sms' | 'voice', req: WebhookRequest): InboundEvent {
    return parseTwilioInbound(channel, twilioParams(req.rawBody), this.options.accountSid, this.now());
  }

  parseStatus(req: WebhookRequest): StatusEvent {
    return parseTwilioStatus(twilioParams(req.rawBody), this.options.accountSid, this.now());
  }

  smsAnswer(outcome: SmsOutcome): WebhookAnswer {
    return twimlAnswer(outcome.kind === 'out-of-session' && outcome.reply ? messageTwiml(outcome.reply) : emptyTwiml());
  }

  voiceBridgeInstruction(req: { to: string; callerId: string }): WebhookAnswer {
    return twimlAnswer(dialTwiml({ to: req.to, callerId: req.callerId, action: this.webhooks.statusCallback }));
  }

  voiceSayInstruction(req: { text: string }): WebhookAnswer {
    return twimlAnswer(sayTwiml(req.text));
  }

  noSessionAnswer(channel: 'sms' | 'voice'): WebhookAnswer {
    return twimlAnswer(channel === 'voice' ? rejectTwiml() : emptyTwiml());
  }

  /** Twilio reads the TwiML a `<Dial action>` returns: an empty one ends the call. */
  statusAnswer(): WebhookAnswer {
    return twimlAnswer(emptyTwiml());
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async listNumbers(): Promise<ProviderResult<ProviderNumber[]>> {
    const numbers: ProviderNumber[] = [];
    let path: string | null = `${this.accountPath}/IncomingPhoneNumbers.json?PageSize=${NUMBERS_PAGE_SIZE}`;
    let latencyMs = 0;
    for (let page = 0; path !== null; page++) {
      if (page === MAX_NUMBER_PAGES)
        return {
          ok: false,
          latencyMs,
          failure: new ProviderCallFailure(
            this.name,
            { countsAgainstProvider: true, cause: 'malformed' },
            `more than ${MAX_NUMBER_PAGES} pages of numbers on numbers`,
          ),
        };
      const result: ProviderResult<{ numbers: ProviderNumber[]; next: string | null }> = await this.call(
        'numbers',
        'GET',
        path,
        undefined,
        readNumberPage,
      );
      latencyMs += result.latencyMs;
      if (!result.ok) return { ...result, latencyMs };
      numbers.push(...result.value.numbers);
      path = result.value.next;
    }
    return { ok: true, value: numbers, latencyMs };
  }

  private pointNumber(number: ProviderNumber, webhooks: NumberWebhooks): Promise<ProviderResult<void>> {
    const form = {
      SmsUrl: webhooks.smsUrl,
      SmsMethod: 'POST',
      VoiceUrl: webhooks.voiceUrl,
      VoiceMethod: 'POST',
      StatusCallback: webhooks.statusCallback,
      StatusCallbackMethod: 'POST',
    };
    return this.call(
      'numbers',
      'POST',
      `${this.accountPath}/IncomingPhoneNumbers/${encodeURIComponent(number.id)}.json`,
      form,
      (answer) => {
        const sid = sidField(answer);
        return 'value' in sid ? { value: undefined } : sid;
      },
    );
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private async call<T>(
    operation: ProviderOperation,
    method: Dispatcher.HttpMethod,
    path: string,
    form: Record<string, string> | undefined,
    read: (answer: Record<string, unknown>) => Reading<T>,
  ): Promise<ProviderResult<T>> {
    const started = performance.now();
    const fail = failedCall<T>(this.name, operation, started);
    const answered = await requestWithin(
      this.agent,
      {
        origin: this.origin,
        path: `${this.basePath}${path}`,
        method,
        headers: {
          accept: 'application/json',
          authorization: this.authorization,
          'user-agent': 'session-broker',
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: form ? new URLSearchParams(form).toString() : undefined,
      },
      this.options.timeoutMs,
      MAX_ANSWER_BYTES,
    );
    if ('failure' in answered) return fail(answered.failure, answered.reason);
    const { status, text } = answered;

    if (status < 200 || status >= 300) {
      const answer = parseObject(text);
      const code = typeof answer?.code === 'number' ? answer.code : undefined;
      const rule = twilioOutcome(status, code);
      // Twilio's own message names the problem (never a credential); kept short.
      const message = typeof answer?.message === 'string' ? `: ${answer.message.slice(0, 160)}` : '';
      return fail(
        {
          countsAgainstProvider: rule.countsAgainstProvider,
          cause: rule.cause,
          status,
          ...(code === undefined ? {} : { vendorCode: String(code) }),
        },
        `HTTP ${status}${code === undefined ? '' : ` (Twilio ${code})`} ${rule.meaning}${message}`,
      );
    }
    const reading = readSuccess(status, text, read);
    if ('failure' in reading) return fail(reading.failure, reading.reason);
    return { ok: true, value: reading.value, latencyMs: performance.now() - started };
  }
}

/** A 2xx without its SID did not do what we asked: a rejection, counted. */
function sidField(answer: Record<string, unknown>): Reading<string> {
  const sid = answer.sid;
  if (sid === undefined || sid === null || sid === '') return { rejected: 'without a sid' };
  if (typeof sid !== 'string') return { malformed: 'a sid that is not a string' };
  return { value: sid };
}

function readNumberPage(answer: Record<string, unknown>): Reading<{ numbers: ProviderNumber[]; next: string | null }> {
  const list = answer.incoming_phone_numbers;
  if (!Array.isArray(list)) return { malformed: 'a page without incoming_phone_numbers' };
  const numbers: ProviderNumber[] = [];
  for (const item of list as Array<Record<string, unknown>>) {
    if (typeof item?.sid !== 'string' || typeof item.phone_number !== 'string')
      return { malformed: 'a number without sid or phone_number' };
    numbers.push({
      id: item.sid,
      number: item.phone_number,
      smsUrl: stringOrNull(item.sms_url),
      voiceUrl: stringOrNull(item.voice_url),
      statusCallback: stringOrNull(item.status_callback),
    });
  }
  const next = answer.next_page_uri;
  if (next !== null && next !== undefined && (typeof next !== 'string' || !next.startsWith('/2010-04-01/')))
    return { malformed: 'a next_page_uri that is not a path of this API' };
  return { value: { numbers, next: typeof next === 'string' && next !== '' ? next : null } };
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
