/**
 * What a Twilio Proxy Session is at a moment, read from its row and the broker session that carries it:
 * Twilio's `status` (open, in-progress, closed), why and when it closed, and its channels. Every `now` is
 * the broker's clock.
 */
import type { Channel } from '../../../numbers/proxy-number.entity';
import type { ProxySession, ProxySessionMode } from './proxy-session.entity';
import type { ProxySessionView } from './proxy-session.repository';

export const MODES: readonly ProxySessionMode[] = ['voice-and-message', 'message-only', 'voice-only'];

export function modeChannels(mode: ProxySessionMode): Channel[] {
  if (mode === 'message-only') return ['sms'];
  if (mode === 'voice-only') return ['voice'];
  return ['voice', 'sms'];
}

/** The idle TTL its carrier gets: Twilio's `ttl`, unless a `date_expiry` overrides it (Twilio Proxy's rule). */
export function idleTtlOf(session: Pick<ProxySession, 'ttl' | 'dateExpiry'>): number | null {
  return session.dateExpiry === null && session.ttl > 0 ? session.ttl : null;
}

/** Until when a Session with no interaction yet is live: its hard limit, or sooner its ttl after its creation. */
export function firstDeadline(session: Pick<ProxySession, 'ttl' | 'dateExpiry' | 'expiresAt' | 'createdAt'>): Date {
  const idle = idleTtlOf(session);
  if (idle === null) return session.expiresAt;
  return new Date(Math.min(session.expiresAt.getTime(), session.createdAt.getTime() + idle * 1000));
}

type ProxyStatus = 'open' | 'in-progress' | 'closed';

interface SessionState {
  readonly status: ProxyStatus;
  readonly closedReason: string | null;
  readonly endedAt: Date | null;
}

/**
 * `open` until its first interaction, `in-progress` from then, `closed` once closed or past its deadline
 * (swept or not). `closed_reason`: `ttl` (no interaction for its ttl), `date_expiry`, `max-duration` (the
 * broker's 7 days, when it named neither), `participant-removed`, or null for a close through the API.
 */
export function sessionState(view: ProxySessionView, now: Date): SessionState {
  const { session, carrier } = view;
  if (session.closedAt) return { status: 'closed', closedReason: session.closedReason, endedAt: session.closedAt };
  if (!carrier || carrier.status === 'pending') {
    const deadline = carrier ? carrier.inactiveAt : firstDeadline(session);
    if (deadline.getTime() <= now.getTime()) return { status: 'closed', closedReason: lapsedReason(session, deadline), endedAt: deadline };
    return { status: 'open', closedReason: null, endedAt: null };
  }
  if (carrier.status === 'closed') return { status: 'closed', closedReason: null, endedAt: carrier.endedAt };
  if (carrier.status === 'expired' || carrier.inactiveAt.getTime() <= now.getTime())
    return { status: 'closed', closedReason: lapsedReason(session, carrier.inactiveAt), endedAt: carrier.endedAt ?? carrier.inactiveAt };
  return { status: carrier.lastInteractionAt ? 'in-progress' : 'open', closedReason: null, endedAt: null };
}

function lapsedReason(session: Pick<ProxySession, 'dateExpiry' | 'expiresAt'>, deadline: Date): string {
  if (deadline.getTime() < session.expiresAt.getTime()) return 'ttl';
  return session.dateExpiry ? 'date_expiry' : 'max-duration';
}
