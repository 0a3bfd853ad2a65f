import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { ProblemException } from '../common/problem';
import { ParticipantNumbers } from '../destinations/participant-numbers';
import { InteractionDto } from './dto/interaction.dto';
import { isLive } from '../sessions/session-expiry';
import type { Session } from '../sessions/session.entity';
import { SessionRepository } from '../sessions/session.repository';
import type { SendMessageDto } from './dto/send-message.dto';
import { InteractionRepository } from './interaction.repository';
import { RelayService } from './relay.service';

/**
 * Messages from the app into a session (`POST /v1/sessions/:id/messages`, Twilio Proxy's MessageInteraction): a
 * text from the proxy number to one participant. Durable as a relay: its interaction is the outbox row, written
 * before the provider is asked and retried like a relay until it goes or the session ends; the same
 * `message.relayed` / `message.failed` events. It is the session's activity (it moves an idle deadline).
 */
@Injectable()
export class MessagesService {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly interactions: InteractionRepository,
    private readonly relay: RelayService,
    private readonly participantNumbers: ParticipantNumbers,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** `idempotencyKey`: the request's Idempotency-Key, kept on the interaction (a retry after a crash finds it). */
  async send(accountId: string, sessionId: string, body: SendMessageDto, idempotencyKey: string | null = null): Promise<InteractionDto> {
    const session = await this.sessions.find(accountId, sessionId);
    if (!session || session.status === 'pending') throw sessionNotFound();
    if (!session.channels.includes('sms'))
      throw new ProblemException({
        status: 422,
        slug: 'channel-not-in-session',
        title: 'No sms channel',
        detail: `Session ${session.id} carries ${session.channels.join(' and ')} only; a message needs a session with the sms channel.`,
        extensions: { channels: session.channels },
      });
    // As the account writes participants: E.164, or national with its default country.
    const to = await this.participantNumbers.readOne(accountId, body.to, 'to');
    if (!session.participants.includes(to)) {
      const message = `${to === body.to.trim() ? to : `${body.to} (${to})`} is not a participant of this session`;
      throw new ProblemException({
        status: 422,
        slug: 'not-a-participant',
        title: 'Not a participant',
        detail: `to: ${message}; a message goes from the proxy number to one of the session's participants.`,
        extensions: { errors: [{ field: 'to', message }] },
      });
    }
    const now = new Date(this.clock.now());
    if (!isLive(session, now)) throw notActive(session);
    const recorded = await this.interactions.record(
      {
        id: randomUUID(),
        sessionId: session.id,
        channel: 'sms',
        from: session.proxyNumber,
        to,
        text: body.text,
        status: 'pending',
        eventId: null,
        providerRef: null,
        idempotencyKey,
        lastError: null,
        activity: true,
      },
      now,
    );
    // Ended between the read and the write (a close, or its deadline passed on another replica's clock).
    if (!recorded) throw notActive({ ...session, status: 'closed' });
    if (recorded.interaction.status === 'pending') await this.relay.attempt(recorded.interaction.id);
    return InteractionDto.from(await this.interactions.get(recorded.interaction.id));
  }

  /** The message a request with this key made (its request died after recording it), if any. */
  async sentWith(accountId: string, sessionId: string, idempotencyKey: string): Promise<InteractionDto | null> {
    const session = await this.sessions.find(accountId, sessionId);
    if (!session) return null;
    const found = await this.interactions.findByIdempotencyKey(session.id, idempotencyKey);
    return found ? InteractionDto.from(found) : null;
  }
}

/** A session of another account, or one not made yet, is simply not there. */
export function sessionNotFound(): ProblemException {
  return new ProblemException({
    status: 404,
    slug: 'session-not-found',
    title: 'Session not found',
    detail: 'No session with this id exists for your account.',
  });
}

function notActive(session: Pick<Session, 'id' | 'status'>): ProblemException {
  const how = session.status === 'closed' ? 'is closed' : 'has expired';
  return new ProblemException({
    status: 409,
    slug: 'session-not-active',
    title: 'Session not active',
    detail: `Session ${session.id} ${how}; a message can only be sent into an active session.`,
  });
}
