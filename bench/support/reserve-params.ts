/**
 * The broker's reservation for the benchmarks that run its statements without the app: a whole `ReservationInput`
 * (the allocator's), and the parameters of `RESERVE_SQL` (the function `broker_reserve_session`) that
 * SessionReservationRepository sends for it, from the repository's own `reservationParameters`, so they follow the
 * function's signature. Unset: an SMS session of one hour, no load order, callback, idle TTL, unique name, intercept
 * URL or sticky preference, the participant limit the bench starts its brokers with (bench/support/stack.ts), the
 * default quarantine, now, a new session id.
 */
import { randomUUID } from 'node:crypto';
import { reservationParameters, type ReservationInput } from '../../apps/broker/src/sessions';

export interface ReserveArgs {
  provider: string;
  accountId: string;
  participants: readonly [string, string];
  loadOrder?: string[];
  callbackUrl?: string | null;
  participantLimit?: number;
  quarantineSeconds?: number;
  now?: Date;
  sessionId?: string;
}

export function reservationInput(args: ReserveArgs): ReservationInput {
  const participants: [string, string] = [args.participants[0], args.participants[1]];
  return {
    sessionId: args.sessionId ?? randomUUID(),
    accountId: args.accountId,
    provider: args.provider,
    channels: ['sms'],
    sortedNumbers: [...participants].sort(),
    participants,
    loadOrder: args.loadOrder ?? [],
    ttlSeconds: 3600,
    callbackUrl: args.callbackUrl ?? null,
    metadata: {},
    idempotencyKey: null,
    participantLimit: args.participantLimit ?? 1000,
    quarantineSeconds: args.quarantineSeconds ?? 86_400,
    now: args.now ?? new Date(),
  };
}

export function reserveParams(args: ReserveArgs): unknown[] {
  return reservationParameters(reservationInput(args));
}
