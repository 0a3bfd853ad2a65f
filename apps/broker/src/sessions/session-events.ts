import type { SessionEventInput, SessionEventType } from '../notifications';
import { SessionDto } from './dto/session.dto';
import type { Session } from './session.entity';

/**
 * The session events a customer receives, as outbox input. A repository records each in the
 * transaction of the change that causes it, so a committed change always has its event and a
 * rolled-back one never does.
 */

/** `session.created`; its `receivedAt` is when the create came in. */
export function sessionCreated(session: Session): SessionEventInput {
  return sessionEvent('session.created', session, { session: SessionDto.from(session) }, session.createdAt);
}

/** Closed: learned at the DELETE (`endedAt`); expired: when the sweeper finds it (now). */
export function sessionEnded(session: Session, status: 'closed' | 'expired'): SessionEventInput {
  const type = status === 'closed' ? 'session.closed' : 'session.expired';
  return sessionEvent(
    type,
    session,
    { session: SessionDto.from(session) },
    status === 'closed' ? (session.endedAt ?? undefined) : undefined,
  );
}

/** `receivedAt`: when the broker learned of the thing (sent as `data.receivedAt`); unset: now. */
export function sessionEvent(
  type: SessionEventType,
  session: Session,
  data: Record<string, unknown>,
  receivedAt?: Date,
): SessionEventInput {
  return { type, accountId: session.accountId, sessionId: session.id, callbackUrl: session.callbackUrl, data, receivedAt };
}
