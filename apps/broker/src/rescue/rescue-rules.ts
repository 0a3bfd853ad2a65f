/**
 * The time rules of a session rescue (docs/design.md#session-rescue), as plain functions of the times they
 * are given, so each is tested on both sides of its boundary without waiting:
 *
 * - An outage is a provider whose breaker is OPEN, named by when it opened (`openedAt`, the breakers' clock):
 *   re-opening after HALF_OPEN is a new outage. A session is moved at most once per outage.
 * - An account's sessions on that provider are due once it has been OPEN for the account's `afterSeconds`,
 *   measured on the breakers' own clock (the one `openedAt` comes from).
 * - Moves are at least 1 / RESCUE_MOVES_PER_SECOND apart, cluster-wide (only the breaker leader moves).
 */

/** A provider out of service: its breaker OPEN since `openedAt` (epoch ms, the breakers' clock). */
export interface Outage {
  readonly provider: string;
  readonly openedAt: number;
  /** What tripped it, for the reason a rebound carries. */
  readonly lastError: string | null;
}

/** An account that opted in (`PUT /v1/account/rescue`). */
export interface RescueAccount {
  readonly id: string;
  readonly afterSeconds: number;
}

/** The outages among `providers` (in routing order): every one whose breaker is OPEN. */
export function openOutages(
  providers: ReadonlyArray<{ name: string; status: { state: string; openedAt: number | null; lastError: string | null } }>,
): Outage[] {
  return providers.flatMap(({ name, status }) =>
    status.state === 'OPEN' && status.openedAt !== null ? [{ provider: name, openedAt: status.openedAt, lastError: status.lastError }] : [],
  );
}

/** The accounts whose sessions are due a rescue at `now`: their provider has been OPEN since `openedAt` for afterSeconds. */
export function dueAccounts<A extends RescueAccount>(openedAt: number, now: number, accounts: readonly A[]): A[] {
  return accounts.filter((account) => now - openedAt >= account.afterSeconds * 1000);
}

/** No two moves closer than 1 / rate seconds; quiet time is not banked (no burst after a pause). */
export class MovePacer {
  private readonly gapMs: number;
  private last: number | null = null;

  constructor(movesPerSecond: number) {
    if (!(movesPerSecond > 0)) throw new RangeError(`movesPerSecond must be positive, got ${movesPerSecond}`);
    this.gapMs = 1000 / movesPerSecond;
  }

  /** How long to wait at `now` before the next move may start. */
  waitMs(now: number): number {
    return this.last === null ? 0 : Math.max(0, Math.ceil(this.last + this.gapMs - now));
  }

  /** A move started at `now`. */
  moved(now: number): void {
    this.last = now;
  }
}
