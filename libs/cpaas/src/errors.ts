import type { FailureCause, ProviderFailure } from './provider';

/** A webhook body that is not what the provider sends; the broker answers it with a 400. */
export class InvalidWebhookError extends Error {
  override readonly name = 'InvalidWebhookError';

  constructor(
    message: string,
    /** The offending field, e.g. `from`; absent when the body as a whole is wrong. */
    readonly field?: string,
  ) {
    super(message);
  }
}

/** A provider configuration naming an adapter this library does not have. */
export class UnknownAdapterError extends Error {
  override readonly name = 'UnknownAdapterError';

  constructor(readonly adapter: string) {
    super(`unknown CPaaS adapter "${adapter}"`);
  }
}

/** A failure's classification: what the breaker and the metrics read, before it is named. */
export type FailureClass = Omit<ProviderFailure, 'reason' | 'provider' | 'detail'>;

/**
 * A provider call's failure, built from its parts: the provider's name and the detail ("HTTP 503 on bind")
 * are fields, and `reason` is the line made of them ("primary: HTTP 503 on bind"), so that nobody reads a
 * name back out of the text. `provider` and `detail` are accessors over private fields, not own properties:
 * a failure compares, spreads and logs as it always has, its classification and its reason line.
 */
export class ProviderCallFailure implements ProviderFailure {
  readonly countsAgainstProvider: boolean;
  readonly cause: FailureCause;
  declare readonly status?: number;
  declare readonly vendorCode?: string;
  readonly reason: string;
  readonly #provider: string;
  readonly #detail: string;

  constructor(provider: string, failure: FailureClass, detail: string) {
    this.countsAgainstProvider = failure.countsAgainstProvider;
    this.cause = failure.cause;
    if (failure.status !== undefined) (this as { status?: number }).status = failure.status;
    if (failure.vendorCode !== undefined) (this as { vendorCode?: string }).vendorCode = failure.vendorCode;
    this.reason = `${provider}: ${detail}`;
    this.#provider = provider;
    this.#detail = detail;
  }

  get provider(): string {
    return this.#provider;
  }

  get detail(): string {
    return this.#detail;
  }
}

export const isInvalidWebhookError = (error: unknown): error is InvalidWebhookError => error instanceof InvalidWebhookError;

/** The body as the broker has it: parsed JSON, or still the raw bytes or string. */
export function webhookObject(body: unknown): Record<string, unknown> {
  let value = body;
  if (Buffer.isBuffer(body) || typeof body === 'string') {
    try {
      value = JSON.parse(body.toString());
    } catch {
      throw new InvalidWebhookError('body is not JSON');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidWebhookError('body must be a JSON object');
  return value as Record<string, unknown>;
}
