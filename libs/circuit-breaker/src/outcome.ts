/**
 * What the breaker is told about a call or a health check. `probe` says whether the call was admitted as a
 * probe (pass `admission.probe` through); in HALF_OPEN an outcome with `probe: false` (say, a call admitted
 * while CLOSED that finishes late) is not probe traffic and is ignored. Left out, it counts as a probe.
 */
export type Outcome =
  | { readonly kind: 'success'; readonly durationMs?: number; readonly probe?: boolean }
  | { readonly kind: 'failure'; readonly reason: string; readonly probe?: boolean }
  | { readonly kind: 'health-pass' }
  | { readonly kind: 'health-fail'; readonly reason: string };

/** The synchronous answer to "may this call go to the guarded resource, and is it a probe?". */
export interface Admission {
  readonly admitted: boolean;
  readonly probe: boolean;
}
