import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { InboundEvent, StatusEvent, VoiceInstruction } from '@app/cpaas';
import { DataSource, type EntityManager } from 'typeorm';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { ProviderRegistry } from '../providers/provider-registry';
import { SessionEvents } from '../sessions/session-events';
import { Session } from '../sessions/session.entity';
import { Interaction, type InteractionStatus } from './interaction.entity';

/** What the broker answers a provider's inbound webhook with. */
export type InboundAnswer =
  | { kind: 'json'; status: number; body: Record<string, unknown> }
  | { kind: 'instruction'; instruction: VoiceInstruction }
  | { kind: 'no-session' };

const MAX_RETRY_DELAY_MS = 60_000;
const CLAIM_BATCH = 50;

/**
 * Relays inbound calls and messages between a session's participants through the session's own
 * provider, showing the proxy number. An SMS relay is an outbox row (the interaction) written
 * before the provider is asked, so a failed or interrupted relay is retried until it succeeds or
 * the session ends; none is lost.
 */
@Injectable()
export class RelayService {
  private readonly logger = new Logger(RelayService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly registry: ProviderRegistry,
    private readonly events: SessionEvents,
  ) {}

  async inbound(provider: string, event: InboundEvent): Promise<InboundAnswer> {
    const session = await this.findActiveSession(provider, event.to, event.from);
    if (!session) return this.outOfSession(provider, event);
    const other = session.participants.find((n) => n !== event.from)!;
    if (event.channel === 'voice') return this.bridge(session, event, other);

    const interaction = await this.recordSms(session, event, other);
    if (interaction.status === 'pending') await this.attempt(interaction.id);
    const current = await this.dataSource.getRepository(Interaction).findOneByOrFail({ id: interaction.id });
    return { kind: 'json', status: 200, body: { result: current.status === 'relayed' ? 'relayed' : 'queued', interactionId: current.id } };
  }

  /** What the provider tells us about a relayed message or a bridged call. */
  async status(provider: string, event: StatusEvent): Promise<boolean> {
    const ref = event.type === 'message.delivered' ? event.messageId : event.callId;
    return this.dataSource.transaction(async (manager) => {
      const interaction = await manager
        .getRepository(Interaction)
        .createQueryBuilder('i')
        .innerJoin(Session, 's', 's.id = i.sessionId')
        .where('i.providerRef = :ref AND s.provider = :provider', { ref, provider })
        .setLock('pessimistic_write')
        .getOne();
      if (!interaction) return false;
      if (event.type === 'message.delivered') {
        if (interaction.status === 'relayed') await manager.update(Interaction, { id: interaction.id }, { status: 'delivered' });
        return true;
      }
      if (interaction.status !== 'bridged') return true; // already told
      const status: InteractionStatus = event.answer === 'completed' ? 'completed' : event.answer;
      await manager.update(Interaction, { id: interaction.id }, { status, durationSec: event.durationSec });
      const session = await manager.getRepository(Session).findOneByOrFail({ id: interaction.sessionId });
      await this.events.write(manager, 'call.completed', session, {
        sessionId: session.id,
        interactionId: interaction.id,
        from: interaction.from,
        to: interaction.to,
        answer: event.answer,
        durationSec: event.durationSec,
      });
      return true;
    });
  }

  /** Tries one pending SMS relay now; on failure it is rescheduled with backoff. */
  async attempt(interactionId: string): Promise<void> {
    const claimed = await this.dataSource.transaction(async (manager) => {
      const interaction = await manager
        .getRepository(Interaction)
        .createQueryBuilder('i')
        .where(`i.id = :id AND i.status = 'pending'`, { id: interactionId })
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .getOne();
      if (!interaction) return null;
      const session = await manager.getRepository(Session).findOneByOrFail({ id: interaction.sessionId });
      if (session.status !== 'active' || session.expiresAt <= new Date()) {
        await this.giveUp(manager, interaction, session, 'the session ended before the message could be relayed');
        return null;
      }
      // Hold the row while the provider is asked: another replica's retry must not send it twice.
      await manager.update(
        Interaction,
        { id: interaction.id },
        { attempts: interaction.attempts + 1, nextAttemptAt: this.retryAt(interaction.attempts + 1) },
      );
      return { interaction, session };
    });
    if (!claimed) return;
    const { interaction, session } = claimed;
    const sent = await this.registry.call(session.provider, 'sms', false, (p) =>
      p.sendSms({ from: session.proxyNumber, to: interaction.to, text: interaction.text ?? '' }),
    );
    await this.dataSource.transaction(async (manager) => {
      if (sent.ok) {
        await manager.update(
          Interaction,
          { id: interaction.id },
          { status: 'relayed', providerRef: sent.value.messageId, nextAttemptAt: null, lastError: null },
        );
        await this.events.write(
          manager,
          'message.relayed',
          session,
          {
            sessionId: session.id,
            interactionId: interaction.id,
            from: interaction.from,
            to: interaction.to,
            attempts: interaction.attempts + 1,
          },
          // Learned when the message came in, not when the relay (perhaps a retry) went out.
          interaction.createdAt,
        );
      } else {
        await manager.update(Interaction, { id: interaction.id }, { lastError: sent.failure.reason });
        this.logger.warn(`relay ${interaction.id} on ${session.provider} failed (${sent.failure.reason}); retrying`);
      }
    });
  }

  /** Retries the relays that are due; run by one replica at a time. Returns how many were tried. */
  async retryDue(): Promise<number> {
    const due: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM interactions WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT ${CLAIM_BATCH}`,
    );
    for (const { id } of due) await this.attempt(id);
    return due.length;
  }

  private retryAt(attempts: number): Date {
    const delay = Math.min(this.config.sessions.relayRetryIntervalMs * 2 ** (attempts - 1), MAX_RETRY_DELAY_MS);
    return new Date(Date.now() + delay);
  }

  private async giveUp(manager: EntityManager, interaction: Interaction, session: Session, reason: string): Promise<void> {
    await manager.update(
      Interaction,
      { id: interaction.id },
      { status: 'failed', nextAttemptAt: null, lastError: interaction.lastError ?? reason },
    );
    await this.events.write(
      manager,
      'message.failed',
      session,
      {
        sessionId: session.id,
        interactionId: interaction.id,
        from: interaction.from,
        to: interaction.to,
        attempts: interaction.attempts,
        reason: interaction.lastError ?? reason,
      },
      interaction.createdAt,
    );
  }

  private async recordSms(session: Session, event: Extract<InboundEvent, { channel: 'sms' }>, to: string): Promise<Interaction> {
    const inserted: Array<{ id: string }> = await this.dataSource.query(
      `INSERT INTO interactions (session_id, channel, from_number, to_number, text, status, provider_event_id, attempts, next_attempt_at)
       VALUES ($1, 'sms', $2, $3, $4, 'pending', $5, 0, now())
       ON CONFLICT (session_id, provider_event_id) WHERE provider_event_id IS NOT NULL DO NOTHING
       RETURNING id`,
      [session.id, event.from, to, event.text, event.eventId],
    );
    // A webhook delivered twice is relayed once.
    if (inserted.length === 0)
      return this.dataSource.getRepository(Interaction).findOneByOrFail({ sessionId: session.id, providerEventId: event.eventId });
    return this.dataSource.getRepository(Interaction).findOneByOrFail({ id: inserted[0].id });
  }

  private async bridge(session: Session, event: Extract<InboundEvent, { channel: 'voice' }>, to: string): Promise<InboundAnswer> {
    await this.dataSource.query(
      `INSERT INTO interactions (session_id, channel, from_number, to_number, status, provider_event_id, provider_ref)
       VALUES ($1, 'voice', $2, $3, 'bridged', $4, $5)
       ON CONFLICT (session_id, provider_event_id) WHERE provider_event_id IS NOT NULL DO NOTHING`,
      [session.id, event.from, to, event.eventId, event.callId],
    );
    return {
      kind: 'instruction',
      instruction: this.registry.adapter(session.provider).voiceBridgeInstruction({ to, callerId: session.proxyNumber }),
    };
  }

  private async outOfSession(provider: string, event: InboundEvent): Promise<InboundAnswer> {
    const reply = this.config.sessions.outOfSessionReply;
    if (reply === 'reject') return { kind: 'no-session' };
    if (event.channel === 'voice')
      return { kind: 'instruction', instruction: this.registry.adapter(provider).voiceSayInstruction({ text: reply }) };
    const sent = await this.registry.call(provider, 'sms', false, (p) => p.sendSms({ from: event.to, to: event.from, text: reply }));
    return { kind: 'json', status: 200, body: { result: 'out-of-session', replied: sent.ok } };
  }

  private async findActiveSession(provider: string, proxyNumber: string, sender: string): Promise<Session | null> {
    return this.dataSource
      .getRepository(Session)
      .createQueryBuilder('s')
      .innerJoin('session_participants', 'sp', 'sp.session_id = s.id AND sp.active AND sp.expires_at > now() AND sp.number = :sender', {
        sender,
      })
      .innerJoin('proxy_numbers', 'pn', 'pn.id = sp.proxy_number_id AND pn.provider = :provider AND pn.number = :proxyNumber', {
        provider,
        proxyNumber,
      })
      .where(`s.status = 'active' AND s.expires_at > now()`)
      .getOne();
  }
}
