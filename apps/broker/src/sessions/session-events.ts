import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EventOutbox, type SessionEventType } from '../notifications';
import { SessionDto } from './dto/session.dto';
import type { Session } from './session.entity';

/**
 * Writes session events into the outbox, in the transaction of the change that causes them, so a
 * committed change always has its event and a rolled-back one never does.
 */
@Injectable()
export class SessionEvents {
  constructor(private readonly outbox: EventOutbox) {}

  /** Learned when the create request came in (the session's `createdAt`). */
  async created(manager: EntityManager, session: Session): Promise<void> {
    await this.write(manager, 'session.created', session, { session: SessionDto.from(session) }, session.createdAt);
  }

  /** Closed: learned at the DELETE (`endedAt`); expired: when the sweeper finds it (now). */
  async ended(manager: EntityManager, session: Session, status: 'closed' | 'expired'): Promise<void> {
    const type = status === 'closed' ? 'session.closed' : 'session.expired';
    await this.write(
      manager,
      type,
      session,
      { session: SessionDto.from(session) },
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
