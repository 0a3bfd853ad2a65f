/**
 * The shape of a vendor's outcome table, as the newer adapters write it (Africa's Talking, Infobip):
 * rows keyed by the vendor's code or `HTTP nnn` / `HTTP nxx`, and the lookup by HTTP status.
 */
import type { FailureCause } from './provider';

export interface OutcomeRule {
  /** The vendor's code, or `HTTP nnn` / `HTTP nxx`. */
  key: string;
  meaning: string;
  countsAgainstProvider: boolean;
  cause: FailureCause;
}

export const outcomeRule = (key: string, meaning: string, countsAgainstProvider: boolean, cause: FailureCause): OutcomeRule => ({
  key,
  meaning,
  countsAgainstProvider,
  cause,
});

/** The row for an HTTP status: the exact one, else its class (`HTTP 5xx`, `HTTP 4xx`); anything else is malformed. */
export function httpStatusRule(rules: readonly OutcomeRule[], status: number): OutcomeRule {
  const find = (key: string) => rules.find((r) => r.key === key);
  return (
    find(`HTTP ${status}`) ??
    (status >= 500 ? find('HTTP 5xx') : status >= 400 ? find('HTTP 4xx') : undefined) ??
    outcomeRule(`HTTP ${status}`, 'Unexpected status', true, 'malformed')
  );
}
