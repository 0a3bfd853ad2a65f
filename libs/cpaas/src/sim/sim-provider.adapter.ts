/**
 * The adapter for the CPaaS simulator (apps/cpaas-sim). It speaks the simulator's provider API
 * over undici with keep-alive, aborts any call still unanswered after `timeoutMs`, and classifies
 * every outcome as docs/design.md#provider-breaker says; it never throws for what the provider did.
 */
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { systemClock, type Clock } from '@app/clock';
import {
  CALL_ANSWERS,
  type BindProxyRequest,
  type BridgeCallRequest,
  type CallAnswer,
  type CpaasProvider,
  type InboundEvent,
  type ProviderOperation,
  type ProviderResult,
  type SendSmsRequest,
  type StatusEvent,
  type SmsOutcome,
  type UnbindProxyRequest,
  type WebhookAnswer,
  type WebhookRequest,
  type WebhookVerification,
  webhookRoutePath,
} from '../provider';
import { SIM_VOICE_INSTRUCTION_CONTENT_TYPE, simApiPath, type SimVoiceInstruction } from './sim-protocol';
import { SIM_SIGNATURE_TOLERANCE_SEC, verifySimSignature } from './sim-signature';
import { parseSimInbound, parseSimStatus } from './sim-webhooks';
import { parseObject } from '../transport-errors';
import { failedCall, readSuccess, requestWithin, type Reading } from '../vendor-request';

export interface SimProviderAdapterOptions {
  /** The provider's name, both in the broker and in the simulator's paths. */
  name: string;
  /** The simulator's base URL, e.g. `http://127.0.0.1:4010`. */
  baseUrl: string;
  /** Any call unanswered after this long is aborted and classified `timeout`. */
  timeoutMs: number;
  webhookSecret: string;
  /** For the webhook timestamp tolerance. */
  clock?: Clock;
  signatureToleranceSec?: number;
}

/** Largest provider answer we read; anything longer is cut (and then is not valid JSON). */
const MAX_ANSWER_BYTES = 64 * 1024;

export class SimProviderAdapter implements CpaasProvider {
  readonly name: string;
  /** The simulator binds a session's participants to its proxy number, as a provider with sessions does. */
  readonly keepsSessions = true;
  /** The simulator has no inline reply: an out-of-session answer is sent with `sendSms`. */
  readonly repliesInline = false;
  private readonly origin: string;
  private readonly apiPath: string;
  private readonly agent: Agent;
  private readonly clock: Clock;

  constructor(private readonly options: SimProviderAdapterOptions) {
    this.name = options.name;
    const url = new URL(options.baseUrl);
    this.origin = url.origin;
    this.apiPath = `${url.pathname.replace(/\/+$/, '')}${simApiPath(options.name)}`;
    this.clock = options.clock ?? systemClock;
    this.agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000, connections: 256 });
  }

  bindProxy(req: BindProxyRequest): Promise<ProviderResult<{ bindingId: string }>> {
    const body = { sessionId: req.sessionId, proxyNumber: req.proxyNumber, participants: req.participants };
    return this.call('bind', 'POST', '/bindings', body, (answer) =>
      mapReading(idField(answer, 'bindingId'), (bindingId) => ({ bindingId })),
    );
  }

  unbindProxy(req: UnbindProxyRequest): Promise<ProviderResult<void>> {
    const body = { sessionId: req.sessionId, proxyNumber: req.proxyNumber };
    return this.call('unbind', 'DELETE', `/bindings/${encodeURIComponent(req.bindingId)}`, body, (answer) =>
      mapReading(idField(answer, 'bindingId'), () => undefined),
    );
  }

  sendSms(req: SendSmsRequest): Promise<ProviderResult<{ messageId: string }>> {
    return this.call('sms', 'POST', '/messages', { from: req.from, to: req.to, text: req.text }, (answer) =>
      mapReading(idField(answer, 'messageId'), (messageId) => ({ messageId })),
    );
  }

  bridgeCall(req: BridgeCallRequest): Promise<ProviderResult<{ callId: string; answer: CallAnswer }>> {
    return this.call(
      'call',
      'POST',
      '/calls',
      { from: req.from, to: req.to },
      (answer): Reading<{ callId: string; answer: CallAnswer }> => {
        const callId = idField(answer, 'callId');
        if (!('value' in callId)) return callId;
        if (!CALL_ANSWERS.includes(answer.answer as CallAnswer))
          return { malformed: `answer ${JSON.stringify(answer.answer)} that is not a call answer` };
        return { value: { callId: callId.value, answer: answer.answer as CallAnswer } };
      },
    );
  }

  healthCheck(): Promise<ProviderResult<void>> {
    return this.call('health', 'GET', '/health', undefined, (answer) =>
      answer.status === 'ok' ? { value: undefined } : { rejected: 'without status "ok"' },
    );
  }

  verifyWebhook(req: WebhookRequest): WebhookVerification {
    return verifySimSignature({
      secret: this.options.webhookSecret,
      // The route the broker routed the request to, not a path read back from a URL (which, without PUBLIC_URL,
      // is rebuilt from the Host header the sender chose).
      target: { provider: this.name, method: req.method, path: webhookRoutePath(this.name, req.route) },
      headers: req.headers,
      rawBody: req.rawBody,
      nowMs: this.clock.now(),
      toleranceSec: this.options.signatureToleranceSec ?? SIM_SIGNATURE_TOLERANCE_SEC,
    });
  }

  parseInbound(channel: 'sms' | 'voice', req: WebhookRequest): InboundEvent {
    return parseSimInbound(channel, req.rawBody);
  }

  parseStatus(req: WebhookRequest): StatusEvent {
    return parseSimStatus(req.rawBody);
  }

  smsAnswer(outcome: SmsOutcome): WebhookAnswer {
    if (outcome.kind === 'out-of-session') return json({ result: 'out-of-session', replied: outcome.replied ?? false });
    return json({ result: outcome.kind, interactionId: outcome.interactionId });
  }

  voiceBridgeInstruction(req: { to: string; callerId: string }): WebhookAnswer {
    return instruction({ action: 'bridge', to: req.to, callerId: req.callerId });
  }

  voiceSayInstruction(req: { text: string }): WebhookAnswer {
    return instruction({ action: 'say', text: req.text });
  }

  /** The simulator relays the broker's 404 problem to whoever triggered the inbound event. */
  noSessionAnswer(): WebhookAnswer | undefined {
    return undefined;
  }

  statusAnswer(req: { matched: boolean }): WebhookAnswer {
    return json({ matched: req.matched });
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async call<T>(
    operation: ProviderOperation,
    method: Dispatcher.HttpMethod,
    path: string,
    body: object | undefined,
    read: (answer: Record<string, unknown>) => Reading<T>,
  ): Promise<ProviderResult<T>> {
    const started = performance.now();
    const fail = failedCall<T>(this.name, operation, started);
    const answered = await requestWithin(
      this.agent,
      {
        origin: this.origin,
        path: `${this.apiPath}${path}`,
        method,
        headers: { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      },
      this.options.timeoutMs,
      MAX_ANSWER_BYTES,
    );
    if ('failure' in answered) return fail(answered.failure, answered.reason);
    const { status, text } = answered;

    if (status === 429) return fail({ countsAgainstProvider: true, cause: 'rate-limited', status }, 'HTTP 429 (rate limited)');
    if (status === 408) return fail({ countsAgainstProvider: true, cause: 'timeout', status }, 'HTTP 408');
    if (status >= 500) return fail({ countsAgainstProvider: true, cause: 'http-5xx', status }, `HTTP ${status}`);
    if (status === 400 || status === 422) {
      // The provider refused what we sent it: the caller's input, not the provider's health.
      const problem = parseObject(text);
      const detail = typeof problem?.detail === 'string' ? `: ${problem.detail}` : '';
      if (problem?.code === 'invalid-number')
        return fail({ countsAgainstProvider: false, cause: 'invalid-number', status }, `invalid number${detail}`);
      return fail({ countsAgainstProvider: false, cause: 'bad-request', status }, `HTTP ${status}${detail}`);
    }
    // Any other 4xx (auth, unknown route) means the provider cannot serve us: it counts.
    if (status >= 400) return fail({ countsAgainstProvider: true, cause: 'bad-request', status }, `HTTP ${status}`);
    if (status < 200 || status >= 300)
      return fail({ countsAgainstProvider: true, cause: 'malformed', status }, `unexpected HTTP ${status}`);

    const reading = readSuccess(status, text, read);
    if ('failure' in reading) return fail(reading.failure, reading.reason);
    return { ok: true, value: reading.value, latencyMs: performance.now() - started };
  }
}

/** A 2xx without its id is a rejection ("a rejection counts as a failure"); an id of the wrong type is malformed. */
function idField(answer: Record<string, unknown>, field: string): Reading<string> {
  const value = answer[field];
  if (value === undefined || value === null || value === '') return { rejected: `without ${field}` };
  if (typeof value !== 'string') return { malformed: `${field} that is not a string` };
  return { value };
}

function mapReading<T, U>(reading: Reading<T>, map: (value: T) => U): Reading<U> {
  return 'value' in reading ? { value: map(reading.value) } : reading;
}

function instruction(body: SimVoiceInstruction): WebhookAnswer {
  return { status: 200, contentType: SIM_VOICE_INSTRUCTION_CONTENT_TYPE, body: JSON.stringify(body) };
}

function json(body: Record<string, unknown>): WebhookAnswer {
  return { status: 200, contentType: 'application/json', body: JSON.stringify(body) };
}
