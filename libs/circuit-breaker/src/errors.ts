import type { BreakerStatus } from './breaker-status';

/** `execute` refused the call: the breaker is OPEN, or HALF_OPEN and this call is not a probe. */
export class BreakerRejectedError extends Error {
  override readonly name = 'BreakerRejectedError';

  constructor(readonly status: BreakerStatus) {
    super(`circuit breaker is ${status.state}: call not admitted${status.lastError === null ? '' : ` (last error: ${status.lastError})`}`);
  }
}

/** `execute` gave up on a call after the policy's `callTimeoutMs`; the call was recorded as a failure. */
export class BreakerTimeoutError extends Error {
  override readonly name = 'BreakerTimeoutError';

  constructor(readonly timeoutMs: number) {
    super(`call timed out after ${timeoutMs} ms`);
  }
}

/** The failure reason recorded for an error thrown by a guarded call. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : error.message;
  return typeof error === 'string' ? error : String(error);
}
