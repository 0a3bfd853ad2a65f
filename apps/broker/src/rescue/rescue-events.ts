/**
 * The events of a session rescue, as outbox input, recorded in the move's own transaction (so a move always has
 * its `session.rebound`, and a failure its `session.rescue_failed`, exactly once). `receivedAt` is the move.
 */
import type { SessionEventInput } from '../notifications';
import { SessionDto } from '../sessions/dto/session.dto';
import { sessionEvent } from '../sessions/session-events';
import type { Session } from '../sessions/session.entity';

/** Where a session was: the provider and the proxy number. */
interface NumberOnProvider {
  provider: string;
  proxyNumber: string;
}

/** A provider tried for the session and what it answered. */
export interface RescueAttempt {
  provider: string;
  outcome: string;
}

/** `session.rebound`: `moved` is the session on its new number; `from` where it was. */
export function sessionRebound(
  moved: Session,
  from: NumberOnProvider,
  reason: string,
  outageStartedAt: Date,
  now: Date,
): SessionEventInput {
  return sessionEvent(
    'session.rebound',
    moved,
    {
      session: SessionDto.from(moved, now),
      from,
      to: { provider: moved.provider, proxyNumber: moved.proxyNumber },
      reason,
      outageStartedAt: outageStartedAt.toISOString(),
    },
    now,
  );
}

/** `session.rescue_failed`: no provider that admitted the session had a number for it; it stays where it is. */
export function sessionRescueFailed(
  session: Session,
  reason: string,
  attempts: readonly RescueAttempt[],
  outageStartedAt: Date,
  now: Date,
): SessionEventInput {
  return sessionEvent(
    'session.rescue_failed',
    session,
    {
      session: SessionDto.from(session, now),
      from: { provider: session.provider, proxyNumber: session.proxyNumber },
      reason,
      attempts,
      outageStartedAt: outageStartedAt.toISOString(),
    },
    now,
  );
}
