/**
 * Vonage's HTTP APIs as the broker uses them, every answer classified (vonage-outcomes.ts), never
 * a throw for what Vonage did:
 * - SMS: Messages API v1, `POST /v1/messages` (JSON; Basic with the API key and secret, or a JWT
 *   of the application when its private key is configured), as `@vonage/messages` sends it;
 * - health: Account API, `GET /account/get-balance`;
 * - numbers: Numbers API, `GET /account/numbers` (all pages) and `POST /number/update`.
 * The account and numbers APIs take the key and secret as query parameters (their descriptions'
 * security scheme): no URL is ever logged or put into a failure reason.
 */
import { performance } from 'node:perf_hooks';
import { tokenGenerate } from '@vonage/jwt';
import { Agent, type Dispatcher } from 'undici';
import { describeTransportError, isTimeoutError, parseObject } from '../transport-errors';
import type { ProviderOperation, ProviderResult } from '../provider';
import { readLimited } from '../read-limited';
import { failedCall } from '../vendor-request';
import { classifyVonageAnswer } from './vonage-outcomes';

const VONAGE_MESSAGES_API = 'https://api.nexmo.com';
const VONAGE_REST_API = 'https://rest.nexmo.com';
/** The Numbers API's largest page. */
const VONAGE_NUMBERS_PAGE_SIZE = 100;
/** 100 pages of 100: an account with more numbers than that is not one this import is for. */
const MAX_NUMBER_PAGES = 100;
const MAX_ANSWER_BYTES = 256 * 1024;

interface VonageApiOptions {
  name: string;
  /** Overrides both API bases (`name=vonage:https://host`): tests, regional edges. */
  baseUrl?: string;
  apiKey: string;
  apiSecret: string;
  applicationId: string;
  /** PEM; when set, SMS are sent with a JWT of the application instead of the key and secret. */
  privateKey?: string;
  timeoutMs: number;
}

interface VonageSmsRequest {
  /** E.164. */
  from: string;
  to: string;
  text: string;
  /** Where Vonage posts this message's statuses (the broker's status route). */
  webhookUrl: string;
}

/** A number of the account, as `GET /account/numbers` lists it. */
interface VonageOwnedNumber {
  country: string;
  /** Digits, no `+`. */
  msisdn: string;
  features: string[];
  messagesCallbackValue?: string;
  voiceCallbackType?: string;
  voiceCallbackValue?: string;
}

type Reading<T> = { value: T } | { rejected: string } | { malformed: string };

/** `+447700900001` → `447700900001`: Vonage's APIs take E.164 digits without the plus. */
const digits = (e164: string): string => e164.replace(/^\+/, '');

export class VonageApi {
  private readonly agent: Agent;
  private readonly messagesBase: URL;
  private readonly restBase: URL;

  constructor(private readonly options: VonageApiOptions) {
    this.messagesBase = new URL(options.baseUrl ?? VONAGE_MESSAGES_API);
    this.restBase = new URL(options.baseUrl ?? VONAGE_REST_API);
    this.agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000, connections: 64 });
  }

  sendSms(req: VonageSmsRequest): Promise<ProviderResult<{ messageId: string }>> {
    const body = {
      message_type: 'text',
      channel: 'sms',
      to: digits(req.to),
      from: digits(req.from),
      text: req.text,
      webhook_url: req.webhookUrl,
    };
    return this.call<{ messageId: string }>(
      'sms',
      this.messagesBase,
      { method: 'POST', path: '/v1/messages', json: body, authorization: this.messagesAuthorization() },
      (answer) => {
        const id = answer.message_uuid;
        if (id === undefined || id === null || id === '') return { rejected: 'without message_uuid' };
        return typeof id === 'string' ? { value: { messageId: id } } : { malformed: 'message_uuid that is not a string' };
      },
    );
  }

  /** The health check: an authenticated read. No credit and no auto-reload fails it: no SMS would go out. */
  balance(): Promise<ProviderResult<{ value: number }>> {
    return this.call<{ value: number }>(
      'health',
      this.restBase,
      { method: 'GET', path: '/account/get-balance', query: this.keyAndSecret() },
      (answer) => {
        const { value, autoReload } = answer;
        if (typeof value !== 'number' || !Number.isFinite(value)) return { malformed: 'a balance that is not a number' };
        if (value <= 0 && autoReload !== true) return { rejected: 'with a balance of 0 and no auto-reload' };
        return { value: { value } };
      },
    );
  }

  /** Every number of the account, all pages. */
  async listNumbers(): Promise<ProviderResult<VonageOwnedNumber[]>> {
    const numbers: VonageOwnedNumber[] = [];
    let latencyMs = 0;
    for (let index = 1; index <= MAX_NUMBER_PAGES; index++) {
      const query = { ...this.keyAndSecret(), size: String(VONAGE_NUMBERS_PAGE_SIZE), index: String(index) };
      const page = await this.call('numbers', this.restBase, { method: 'GET', path: '/account/numbers', query }, readNumberPage);
      latencyMs += page.latencyMs;
      if (!page.ok) return page;
      numbers.push(...page.value.numbers);
      if (page.value.numbers.length < VONAGE_NUMBERS_PAGE_SIZE || numbers.length >= page.value.count) break;
    }
    return { ok: true, value: numbers, latencyMs };
  }

  /**
   * Links a number to the broker's Vonage application: its inbound SMS (Messages API) and calls
   * (answer URL) go to the application's webhooks, which point at the broker; call ends are also
   * reported to `voiceStatusCallback`.
   */
  linkNumber(number: { country: string; msisdn: string }, voiceStatusCallback: string): Promise<ProviderResult<void>> {
    const form = { country: number.country, msisdn: number.msisdn, app_id: this.options.applicationId, voiceStatusCallback };
    return this.call<void>(
      'numbers',
      this.restBase,
      { method: 'POST', path: '/number/update', query: this.keyAndSecret(), form },
      (answer) =>
        answer['error-code'] === '200' ? { value: undefined } : { rejected: `with error-code ${JSON.stringify(answer['error-code'])}` },
    );
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private keyAndSecret(): Record<string, string> {
    return { api_key: this.options.apiKey, api_secret: this.options.apiSecret };
  }

  private messagesAuthorization(): string {
    const { applicationId, privateKey, apiKey, apiSecret } = this.options;
    if (privateKey) return `Bearer ${tokenGenerate(applicationId, privateKey)}`;
    return `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}`;
  }

  private async call<T>(
    operation: ProviderOperation,
    base: URL,
    request: {
      method: Dispatcher.HttpMethod;
      path: string;
      query?: Record<string, string>;
      json?: object;
      form?: Record<string, string>;
      authorization?: string;
    },
    read: (answer: Record<string, unknown>) => Reading<T>,
  ): Promise<ProviderResult<T>> {
    const started = performance.now();
    const fail = failedCall<T>(this.options.name, operation, started);
    const headers: Record<string, string> = { accept: 'application/json' };
    let body: string | undefined;
    if (request.json) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(request.form).toString();
    }
    if (request.authorization) headers.authorization = request.authorization;
    const query = request.query ? `?${new URLSearchParams(request.query).toString()}` : '';

    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.options.timeoutMs);
    let status: number;
    let text: string;
    try {
      const response = await this.agent.request({
        origin: base.origin,
        path: `${base.pathname.replace(/\/+$/, '')}${request.path}${query}`,
        method: request.method,
        headers,
        body,
        signal: abort.signal,
      });
      status = response.statusCode;
      text = await readLimited(response.body, MAX_ANSWER_BYTES);
    } catch (error) {
      if (timedOut || isTimeoutError(error))
        return fail({ countsAgainstProvider: true, cause: 'timeout' }, `no answer within ${this.options.timeoutMs} ms`);
      return fail({ countsAgainstProvider: true, cause: 'transport' }, describeTransportError(error));
    } finally {
      clearTimeout(timer);
    }

    const answer = parseObject(text);
    const reading = classifyVonageAnswer(status, answer);
    if (!reading.ok) {
      const { rule, detail } = reading;
      const vendorCode = rule.key.startsWith('HTTP') ? undefined : rule.key;
      return fail(
        { countsAgainstProvider: rule.countsAgainstProvider, cause: rule.cause, status, ...(vendorCode ? { vendorCode } : {}) },
        `HTTP ${status}${vendorCode ? ` (${vendorCode})` : ''}${detail ? `: ${detail}` : ''}`,
      );
    }
    if (!answer)
      return fail({ countsAgainstProvider: true, cause: 'malformed', status }, `HTTP ${status} with a body that is not a JSON object`);
    const result = read(answer);
    if ('rejected' in result)
      return fail({ countsAgainstProvider: true, cause: 'rejected', status }, `HTTP ${status} ${result.rejected} (rejected)`);
    if ('malformed' in result)
      return fail({ countsAgainstProvider: true, cause: 'malformed', status }, `HTTP ${status} with ${result.malformed}`);
    return { ok: true, value: result.value, latencyMs: performance.now() - started };
  }
}

function readNumberPage(answer: Record<string, unknown>): Reading<{ count: number; numbers: VonageOwnedNumber[] }> {
  const count = answer.count ?? 0;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) return { malformed: 'a count that is not a number' };
  const list = answer.numbers ?? [];
  if (!Array.isArray(list)) return { malformed: 'numbers that are not a list' };
  const numbers: VonageOwnedNumber[] = [];
  for (const item of list as unknown[]) {
    const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    if (typeof entry.msisdn !== 'string' || !/^[1-9]\d{1,14}$/.test(entry.msisdn)) return { malformed: 'a number without a valid msisdn' };
    if (typeof entry.country !== 'string' || !/^[A-Z]{2}$/.test(entry.country))
      return { malformed: `number ${entry.msisdn} without a country` };
    numbers.push({
      country: entry.country,
      msisdn: entry.msisdn,
      features: Array.isArray(entry.features) ? entry.features.filter((f): f is string => typeof f === 'string') : [],
      ...optionalText(entry, 'messagesCallbackValue'),
      ...optionalText(entry, 'voiceCallbackType'),
      ...optionalText(entry, 'voiceCallbackValue'),
    });
  }
  return { value: { count, numbers } };
}

function optionalText(entry: Record<string, unknown>, field: string): Record<string, string> {
  return typeof entry[field] === 'string' ? { [field]: entry[field] } : {};
}
