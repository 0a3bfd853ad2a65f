/** A provider name the broker has no adapter (and so no breaker) for: a caller's mistake, never a vendor's
 * answer. Callers that can meet one ask `has()` first, or match it with `instanceof`. */
export class UnknownProviderError extends Error {
  override readonly name = 'UnknownProviderError';

  constructor(readonly provider: string) {
    super(`unknown provider "${provider}"`);
  }
}
