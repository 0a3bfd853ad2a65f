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
