/**
 * The expiry rules of a session, in one place: a session is live while it is active and before its
 * inactiveAt (expiresAt, or sooner its idle deadline), whatever the sweeper has done; it ended on its
 * idle TTL when that deadline came before the hard limit. Every `now` is the broker's clock.
 */
import type { ExpiredReason, Session } from './session.entity';

/** Why a session past its inactiveAt expired: no interaction for idleTtlSeconds, or its hard limit. */
export function expiredReasonOf(session: Pick<Session, 'inactiveAt' | 'expiresAt'>): ExpiredReason {
  return session.inactiveAt.getTime() < session.expiresAt.getTime() ? 'idle' : 'ttl';
}

/** Active (or being created) and not yet at its inactiveAt. */
export function isLive(session: Pick<Session, 'status' | 'inactiveAt'>, now: Date): boolean {
  return (session.status === 'active' || session.status === 'pending') && session.inactiveAt.getTime() > now.getTime();
}

/** The session as it ends at `now`: `expired` once past its inactiveAt (with why), else `closed`. */
export function ended(session: Session, now: Date): Session {
  if (session.inactiveAt.getTime() <= now.getTime())
    return { ...session, status: 'expired', endedAt: now, expiredReason: expiredReasonOf(session) };
  return { ...session, status: 'closed', endedAt: now };
}
