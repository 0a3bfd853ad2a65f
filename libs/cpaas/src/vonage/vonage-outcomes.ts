/**
 * What a Vonage API answer means for the breaker (docs/providers.md#the-vonage-outcome-table): which errors are the provider's fault
 * (counted) and which are the customer's input (not counted). The Messages API and the REST APIs
 * answer errors as RFC 7807 problem+json whose `type` ends in a code (`…/api-errors/messages#1000`,
 * `…/api-errors#unauthorized`); the table is keyed by that code, then by HTTP status when the body
 * names none. docs/providers.md copies this table; vonage-outcomes.spec.ts tests it row by row.
 */
import type { FailureCause } from '../provider';

export interface VonageOutcomeRule {
  /** The code after `#` in the problem `type`, or `HTTP nnn` / `HTTP nxx` for a status without one. */
  key: string;
  /** Vonage's own words for it, shortened. */
  meaning: string;
  countsAgainstProvider: boolean;
  cause: FailureCause;
}

const rule = (key: string, meaning: string, countsAgainstProvider: boolean, cause: FailureCause): VonageOutcomeRule => ({
  key,
  meaning,
  countsAgainstProvider,
  cause,
});

/** Problem `type` codes: the Messages API's numbered ones, then the generic ones every Vonage API uses. */
export const VONAGE_PROBLEM_RULES: readonly VonageOutcomeRule[] = [
  rule('1000', 'Throttled: submission capacity of the account exceeded', true, 'rate-limited'),
  rule('1010', 'Missing params', false, 'bad-request'),
  rule('1020', 'Invalid params (e.g. a `to` that is no phone number)', false, 'bad-request'),
  rule('1030', 'Internal error of the platform', true, 'http-5xx'),
  rule('1040', 'Invalid message: unrecognised number prefix', false, 'invalid-number'),
  rule('1050', 'Number barred: the recipient may not receive messages', false, 'invalid-number'),
  rule('1060', 'Partner account barred', true, 'account'),
  rule('1070', 'Partner quota exceeded: not enough credit', true, 'account'),
  rule('1080', 'Account not enabled for REST', true, 'account'),
  rule('1090', 'Message too long', false, 'bad-request'),
  rule('1100', 'Communication failed inside the platform', true, 'http-5xx'),
  rule('1120', 'Illegal sender address: our proxy number refused as sender', true, 'rejected'),
  rule('unauthorized', 'Credentials refused', true, 'auth'),
  rule('invalid-api-key', 'API key unknown', true, 'auth'),
  rule('jwt-expired', 'Our application JWT expired', true, 'auth'),
  rule('jwt-revoked', 'Our application JWT revoked', true, 'auth'),
  rule('invalid-signature', 'Request signature refused', true, 'auth'),
  rule('forbidden', 'Account not allowed to do this', true, 'account'),
  rule('unprovisioned', 'Credentials without access to the product', true, 'account'),
  rule('account-suspended', 'Account suspended', true, 'account'),
  rule('low-balance', 'Balance too low', true, 'account'),
  rule('not-found', 'Resource or route not found (wrong API base?)', true, 'rejected'),
  rule('invalid-params', 'Invalid params', false, 'bad-request'),
];

/** HTTP statuses whose body names no known code. */
export const VONAGE_STATUS_RULES: readonly VonageOutcomeRule[] = [
  rule('HTTP 429', 'Rate limited', true, 'rate-limited'),
  rule('HTTP 408', 'Request timeout', true, 'timeout'),
  rule('HTTP 5xx', 'Server error', true, 'http-5xx'),
  rule('HTTP 401', 'Credentials refused', true, 'auth'),
  rule('HTTP 400', 'Request refused as input', false, 'bad-request'),
  rule('HTTP 422', 'Request refused as input', false, 'bad-request'),
  rule('HTTP 4xx', 'Auth, balance, account or route: the provider cannot serve us', true, 'rejected'),
];

type VonageAnswerReading = { ok: true } | { ok: false; rule: VonageOutcomeRule; detail?: string };

const byProblemCode = new Map(VONAGE_PROBLEM_RULES.map((r) => [r.key, r]));
const byStatus = new Map(VONAGE_STATUS_RULES.map((r) => [r.key, r]));

/** The code after `#` in a problem `type` URL, e.g. `1000` or `unauthorized`. */
export function problemCode(body: unknown): string | undefined {
  const type = (body as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return undefined;
  const hash = type.lastIndexOf('#');
  return hash >= 0 && hash < type.length - 1 ? type.slice(hash + 1) : undefined;
}

/** Classifies an HTTP answer from a Vonage API; a 2xx is ok here (its body is read by the caller). */
export function classifyVonageAnswer(status: number, body: unknown): VonageAnswerReading {
  if (status >= 200 && status < 300) return { ok: true };
  const code = problemCode(body);
  const detail = describeProblem(body);
  const known = code ? byProblemCode.get(code) : undefined;
  if (known) return { ok: false, rule: known, detail };
  return { ok: false, rule: statusRule(status), detail };
}

function statusRule(status: number): VonageOutcomeRule {
  const exact = byStatus.get(`HTTP ${status}`);
  if (exact) return exact;
  if (status >= 500) return byStatus.get('HTTP 5xx')!;
  if (status >= 400) return byStatus.get('HTTP 4xx')!;
  // 1xx/3xx: nothing we asked for happened; the provider's answer is unusable.
  return rule(`HTTP ${status}`, 'Unexpected status', true, 'malformed');
}

/** `title` and `detail` of a problem body, cut to one short line (they never carry our secrets). */
function describeProblem(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { title, detail } = body as { title?: unknown; detail?: unknown };
  const parts = [title, detail].filter((part): part is string => typeof part === 'string' && part.length > 0);
  return parts.length ? parts.join(': ').slice(0, 200) : undefined;
}
