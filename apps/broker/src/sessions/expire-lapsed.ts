import type { Session } from './session.entity';
import { sessionEnded } from './session-events';
import { expiredReasonOf } from './session-expiry';
import type { SessionRepository, SessionTransaction } from './session.repository';

/**
 * Marks the sessions `lock` finds (active, past their inactiveAt, row-locked) `expired`, frees their
 * participants and records `session.expired` for each, in one transaction; answers how many.
 */
export function expireLapsed(
  repository: SessionRepository,
  now: Date,
  lock: (tx: SessionTransaction) => Promise<Session[]>,
): Promise<number> {
  return repository.transaction(async (tx) => {
    const due = await lock(tx);
    const expired = due.map((s): Session => ({ ...s, status: 'expired', endedAt: now, expiredReason: expiredReasonOf(s) }));
    await tx.end(expired);
    for (const session of expired) await tx.record(sessionEnded(session, 'expired'));
    return due.length;
  });
}
