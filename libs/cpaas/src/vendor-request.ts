/**
 * The HTTP part every adapter shares: one request over the adapter's keep-alive agent, aborted
 * after the call timeout, its answer read up to a bound; a timeout or transport error comes back
 * classified (counted against the provider), never thrown. And the reading of a 2xx answer: a
 * JSON object whose expected id is there, or a counted rejection / malformed answer.
 */
import { performance } from 'node:perf_hooks';
import type { Agent, Dispatcher } from 'undici';
import { ProviderCallFailure, type FailureClass } from './errors';
import type { ProviderFailure, ProviderOperation, ProviderResult } from './provider';
import { readLimited } from './read-limited';
import { describeTransportError, isTimeoutError, parseObject } from './transport-errors';

/** A failure before its reason gets the provider's name and the operation. */
interface UnnamedFailure {
  failure: FailureClass;
  reason: string;
}

/** A classified failure of `provider`'s `operation` started at `started` (performance.now()), its reason named. */
export function failedCall<T>(
  provider: string,
  operation: ProviderOperation,
  started: number,
): (failure: FailureClass, reason: string) => ProviderResult<T> {
  return (failure, reason) => ({
    ok: false,
    failure: new ProviderCallFailure(provider, failure, `${reason} on ${operation}`),
    latencyMs: performance.now() - started,
  });
}

type VendorAnswer = { status: number; text: string } | UnnamedFailure;

export async function requestWithin(
  agent: Agent,
  request: Omit<Dispatcher.RequestOptions, 'signal'>,
  timeoutMs: number,
  maxAnswerBytes: number,
): Promise<VendorAnswer> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  try {
    const response = await agent.request({ ...request, signal: abort.signal });
    return { status: response.statusCode, text: await readLimited(response.body, maxAnswerBytes) };
  } catch (error) {
    if (timedOut || isTimeoutError(error))
      return { failure: { countsAgainstProvider: true, cause: 'timeout' }, reason: `no answer within ${timeoutMs} ms` };
    return { failure: { countsAgainstProvider: true, cause: 'transport' }, reason: describeTransportError(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** What an adapter's reader makes of a 2xx JSON body. */
export type Reading<T> = { value: T } | { rejected: string } | { malformed: string };

/** A 2xx answer read into its value; anything else it could be is a counted failure. */
export function readSuccess<T>(
  status: number,
  text: string,
  read: (answer: Record<string, unknown>) => Reading<T>,
): { value: T } | UnnamedFailure {
  const answer = parseObject(text);
  if (!answer)
    return {
      failure: { countsAgainstProvider: true, cause: 'malformed', status },
      reason: `HTTP ${status} with a body that is not a JSON object`,
    };
  const reading = read(answer);
  if ('rejected' in reading)
    return { failure: { countsAgainstProvider: true, cause: 'rejected', status }, reason: `HTTP ${status} ${reading.rejected} (rejected)` };
  if ('malformed' in reading)
    return { failure: { countsAgainstProvider: true, cause: 'malformed', status }, reason: `HTTP ${status} with ${reading.malformed}` };
  return reading;
}

/** How a vendor's non-2xx answer is classified: its rule, and what of the vendor's own words to quote. */
interface Refusal {
  countsAgainstProvider: boolean;
  cause: ProviderFailure['cause'];
  meaning: string;
  /** The vendor's words (never a credential), one short line. */
  said?: string;
  vendorCode?: string;
}

/** One vendor call, start to classified end: transport and timeout, a refused status, a 2xx read by `read`. */
export async function callVendor<T>(call: {
  provider: string;
  operation: ProviderOperation;
  agent: Agent;
  request: Omit<Dispatcher.RequestOptions, 'signal'>;
  timeoutMs: number;
  maxAnswerBytes: number;
  refusal: (status: number, text: string) => Refusal;
  read: (answer: Record<string, unknown>) => Reading<T>;
}): Promise<ProviderResult<T>> {
  const started = performance.now();
  const fail = failedCall<T>(call.provider, call.operation, started);
  const answered = await requestWithin(call.agent, call.request, call.timeoutMs, call.maxAnswerBytes);
  if ('failure' in answered) return fail(answered.failure, answered.reason);
  const { status, text } = answered;
  if (status < 200 || status >= 300) {
    const refused = call.refusal(status, text);
    return fail(
      {
        countsAgainstProvider: refused.countsAgainstProvider,
        cause: refused.cause,
        status,
        ...(refused.vendorCode === undefined ? {} : { vendorCode: refused.vendorCode }),
      },
      `HTTP ${status} ${refused.meaning}${refused.said ? `: ${refused.said}` : ''}`,
    );
  }
  const reading = readSuccess(status, text, call.read);
  if ('failure' in reading) return fail(reading.failure, reading.reason);
  return { ok: true, value: reading.value, latencyMs: performance.now() - started };
}
