/**
 * The parameters of the broker's reservation (`RESERVE_SQL`, the function `broker_reserve_session`) in the order
 * SessionReservationRepository sends them, for the benchmarks that run the statement without the app. Unset: an SMS
 * session of one hour, no load order, callback, idle TTL, unique name, intercept URL or sticky preference, the
 * participant limit the bench starts its brokers with (bench/support/stack.ts), the default quarantine, now, a new
 * session id.
 */
import { randomUUID } from 'node:crypto';

export interface ReserveArgs {
  provider: string;
  accountId: string;
  participants: readonly [string, string];
  loadOrder?: string[];
  callbackUrl?: string | null;
  participantLimit?: number;
  quarantineSeconds?: number;
  now?: Date;
}

export function reserveParams(args: ReserveArgs): unknown[] {
  const participants = [...args.participants];
  return [
    args.provider,
    ['sms'],
    [...participants].sort(),
    args.loadOrder ?? [],
    args.accountId,
    participants,
    args.callbackUrl ?? null,
    '{}',
    3600,
    null,
    args.participantLimit ?? 1000,
    args.now ?? new Date(),
    null,
    null,
    null,
    false,
    args.quarantineSeconds ?? 86_400,
    randomUUID(),
  ];
}
