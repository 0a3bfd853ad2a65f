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

  async created(manager: EntityManager, session: Session): Promise<void> {
    await this.write(manager, 'session.created', session, { session: SessionDto.from(session) });
  }

  async ended(manager: EntityManager, session: Session, status: 'closed' | 'expired'): Promise<void> {
    await this.write(manager, status === 'closed' ? 'session.closed' : 'session.expired', session, { session: SessionDto.from(session) });
  }

  async write(manager: EntityManager, type: SessionEventType, session: Session, data: Record<string, unknown>): Promise<void> {
    await this.outbox.record(manager, {
      type,
      accountId: session.accountId,
      sessionId: session.id,
      callbackUrl: session.callbackUrl,
      data,
    });
  }
}
