import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EventOutbox, type Queryable, type SessionEventType } from '../notifications';
import { SessionDto } from './dto/session.dto';
import type { Session } from './session.entity';

/**
 * Writes session events into the outbox, in the transaction of the change that causes them, so a
 * committed change always has its event and a rolled-back one never does.
 */
@Injectable()
export class SessionEvents {
  constructor(private readonly outbox: EventOutbox) {}

  /**
   * Makes the reservation active with its binding and records `session.created`, in one statement:
   * the event exists exactly when the activation happened (its `receivedAt` is when the create came in).
   * False when the session was no longer pending.
   */
  async activated(runner: Queryable, session: Session): Promise<boolean> {
    const recorded = await this.outbox.recordWithChange(
      runner,
      {
        sql: `UPDATE sessions SET status = 'active', binding_id = $2 WHERE id = $1 AND status = 'pending' RETURNING id`,
        params: [session.id, session.bindingId],
      },
      {
        type: 'session.created',
        accountId: session.accountId,
        sessionId: session.id,
        callbackUrl: session.callbackUrl,
        data: { session: SessionDto.from(session, session.createdAt) },
        receivedAt: session.createdAt,
      },
    );
    return recorded !== null;
  }

  /** Closed: learned at the DELETE (`endedAt`); expired: when the sweeper finds it (now). */
  async ended(manager: EntityManager, session: Session, status: 'closed' | 'expired'): Promise<void> {
    const type = status === 'closed' ? 'session.closed' : 'session.expired';
    await this.write(
      manager,
      type,
      session,
      { session: SessionDto.from(session, session.endedAt ?? session.expiresAt) },
      status === 'closed' ? (session.endedAt ?? undefined) : undefined,
    );
  }

  /** `receivedAt`: when the broker learned of the thing (sent as `data.receivedAt`); unset: now. */
  async write(
    manager: EntityManager,
    type: SessionEventType,
    session: Session,
    data: Record<string, unknown>,
    receivedAt?: Date,
  ): Promise<void> {
    await this.outbox.record(manager, {
      type,
      accountId: session.accountId,
      sessionId: session.id,
      callbackUrl: session.callbackUrl,
      data,
      receivedAt,
    });
  }
}
