import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { InboundEvent, StatusEvent, WebhookAnswer } from '@app/cpaas';
import { DataSource, type EntityManager } from 'typeorm';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { ProviderRegistry } from '../providers/provider-registry';
import { SessionEvents } from '../sessions/session-events';
import { Session } from '../sessions/session.entity';
import { Interaction, type InteractionStatus } from './interaction.entity';

/** What the broker answers a provider's inbound webhook with: the provider's own format, or a 404 problem. */
export type InboundAnswer = { kind: 'answer'; answer: WebhookAnswer } | { kind: 'no-session' } | { kind: 'not-our-number' };

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
    if (!session) {
      // A number this provider's pool does not hold is no proxy of ours: nobody to answer for.
      if (!(await this.inPool(provider, event.to))) return { kind: 'not-our-number' };
      return this.outOfSession(provider, event);
    }
    const other = session.participants.find((n) => n !== event.from)!;
    if (event.channel === 'voice') return this.bridge(session, event, other);

    const interaction = await this.recordSms(session, event, other);
    if (interaction.status === 'pending') await this.attempt(interaction.id);
    const current = await this.dataSource.getRepository(Interaction).findOneByOrFail({ id: interaction.id });
    const kind = current.status === 'pending' ? 'queued' : 'relayed';
    return { kind: 'answer', answer: this.registry.webhooks(provider).smsAnswer({ kind, interactionId: current.id }) };
  }

  /**
   * What the provider tells us about a relayed message or a bridged call. A bridged call's outcome
   * feeds the provider's breaker once, when it first arrives (SPEC §9): `call.failed` is a
   * call-setup failure, any answer a success.
   */
  async status(provider: string, event: StatusEvent): Promise<boolean> {
    if (event.type === 'message.progress') return this.knownMessage(provider, event.messageId);
    if (event.type === 'call.progress') return this.knownMessage(provider, event.callId);
    if (event.type !== 'call.completed' && event.type !== 'call.failed') return this.messageOutcome(provider, event);
    const recorded = await this.callOutcome(provider, event);
    if (recorded === 'first') {
      this.registry.record(
        provider,
        'call',
        false,
        event.type === 'call.failed'
          ? { ok: false, failure: { countsAgainstProvider: true, cause: 'call-setup', reason: `${provider}: ${event.reason} on call` } }
          : { ok: true, latencyMs: 0 },
      );
    }
    return recorded !== 'unmatched';
  }

  private async knownMessage(provider: string, messageId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM interactions i JOIN sessions s ON s.id = i.session_id WHERE i.provider_ref = $1 AND s.provider = $2 LIMIT 1`,
      [messageId, provider],
    );
    return rows.length > 0;
  }

  private async messageOutcome(
    provider: string,
    event: Extract<StatusEvent, { type: 'message.delivered' | 'message.undelivered' | 'message.failed' }>,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const interaction = await this.lockByRef(manager, provider, event.messageId);
      if (!interaction) return false;
      if (interaction.status !== 'relayed') return true; // already told, or not sent by us yet
      if (event.type === 'message.delivered') {
        await manager.update(Interaction, { id: interaction.id }, { status: 'delivered' });
        return true;
      }
      // The vendor took the message but could not hand it over: the customer hears of it once.
      const outcome = event.type === 'message.undelivered' ? 'undelivered' : 'failed';
      const reason = `${outcome} by ${provider}${event.errorCode ? ` (error ${event.errorCode})` : ''}`;
      await manager.update(Interaction, { id: interaction.id }, { status: outcome, lastError: reason });
      const session = await manager.getRepository(Session).findOneByOrFail({ id: interaction.sessionId });
      await this.events.write(manager, 'message.failed', session, {
        sessionId: session.id,
        interactionId: interaction.id,
        from: interaction.from,
        to: interaction.to,
        attempts: interaction.attempts,
        reason,
      });
      return true;
    });
  }

  private lockByRef(manager: EntityManager, provider: string, ref: string): Promise<Interaction | null> {
    return manager
      .getRepository(Interaction)
      .createQueryBuilder('i')
      .innerJoin(Session, 's', 's.id = i.sessionId')
      .where('i.providerRef = :ref AND s.provider = :provider', { ref, provider })
      .setLock('pessimistic_write')
      .getOne();
  }

  /** `first` when this event settled the bridged call, `again` when it had been settled already. */
  private async callOutcome(
    provider: string,
    event: Extract<StatusEvent, { type: 'call.completed' | 'call.failed' }>,
  ): Promise<'first' | 'again' | 'unmatched'> {
    return this.dataSource.transaction(async (manager) => {
      const interaction = await this.lockByRef(manager, provider, event.callId);
      if (!interaction) return 'unmatched';
      if (interaction.status !== 'bridged') return 'again'; // already told
      const failed = event.type === 'call.failed';
      const status: InteractionStatus = failed ? 'failed' : event.answer;
      const durationSec = failed ? 0 : event.durationSec;
      await manager.update(
        Interaction,
        { id: interaction.id },
        { status, durationSec, lastError: failed ? `${provider}: ${event.reason}` : null },
      );
      const session = await manager.getRepository(Session).findOneByOrFail({ id: interaction.sessionId });
      await this.events.write(manager, 'call.completed', session, {
        sessionId: session.id,
        interactionId: interaction.id,
        from: interaction.from,
        to: interaction.to,
        answer: failed ? 'failed' : event.answer,
        durationSec,
      });
      return 'first';
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
      } else if (!sent.failure.countsAgainstProvider) {
        // The provider refused the message itself (an invalid or unsubscribed number): retrying cannot help.
        await this.giveUp(
          manager,
          { ...interaction, attempts: interaction.attempts + 1, lastError: sent.failure.reason },
          session,
          sent.failure.reason,
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
      kind: 'answer',
      answer: this.registry.webhooks(session.provider).voiceBridgeInstruction({ to, callerId: session.proxyNumber, callId: event.callId }),
    };
  }

  private async outOfSession(provider: string, event: InboundEvent): Promise<InboundAnswer> {
    const reply = this.config.sessions.outOfSessionReply;
    const adapter = this.registry.webhooks(provider);
    if (reply === 'reject') {
      const answer = adapter.noSessionAnswer(event.channel);
      return answer ? { kind: 'answer', answer } : { kind: 'no-session' };
    }
    if (event.channel === 'voice') return { kind: 'answer', answer: adapter.voiceSayInstruction({ text: reply }) };
    // A vendor that replies inline (TwiML <Message>) needs no call of ours.
    if (adapter.repliesInline) return { kind: 'answer', answer: adapter.smsAnswer({ kind: 'out-of-session', reply }) };
    const sent = await this.registry.call(provider, 'sms', false, (p) => p.sendSms({ from: event.to, to: event.from, text: reply }));
    return { kind: 'answer', answer: adapter.smsAnswer({ kind: 'out-of-session', replied: sent.ok }) };
  }

  private async inPool(provider: string, number: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM proxy_numbers WHERE provider = $1 AND number = $2', [
      provider,
      number,
    ]);
    return rows.length > 0;
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
