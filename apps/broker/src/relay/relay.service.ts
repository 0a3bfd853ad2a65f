import { Inject, Injectable, Logger } from '@nestjs/common';
import { ProviderCallFailure, type InboundEvent, type StatusEvent, type WebhookAnswer } from '@app/cpaas';
import { systemClock, type Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { InterceptClient, type InterceptDecision } from '../intercept';
import { ProxyNumberRepository } from '../numbers/proxy-number.repository';
import { ProviderRegistry } from '../providers/provider-registry';
import { SessionDto } from '../sessions/dto/session.dto';
import { sessionEvent } from '../sessions/session-events';
import type { Session } from '../sessions/session.entity';
import { SessionRepository, type RoutedSession } from '../sessions/session.repository';
import type { Interaction, InteractionStatus } from './interaction.entity';
import { interactionBlocked, interactionOutOfSession } from './interaction-events';
import { interactionIdFor } from './interaction-id';
import { InteractionRepository, type InteractionTransaction, type NewInteraction } from './interaction.repository';
import { SessionRelayLimit } from './session-relay-limit';

/** What the broker answers a provider's inbound webhook with: the provider's own format, or a 404 problem. */
type InboundAnswer =
  | { kind: 'answer'; answer: WebhookAnswer }
  | { kind: 'no-session' }
  | { kind: 'not-our-number' }
  /** The session relayed its RATE_LIMIT_SESSION_RELAYS_BURST; the next relay is allowed in `retryAfterMs`. */
  | { kind: 'rate-limited'; retryAfterMs: number };

const MAX_RETRY_DELAY_MS = 60_000;
const CLAIM_BATCH = 50;

/**
 * Relays inbound calls and messages between a session's participants through the session's own
 * provider, showing the proxy number. An SMS relay is an outbox row (the interaction) written
 * before the provider is asked, so a failed or interrupted relay is retried until it succeeds or
 * the session ends; none is lost.
 *
 * An inbound on a channel the session does not have gets the out-of-session answer, recorded as an
 * `out-of-session` interaction. A session with an intercept URL (its own, else its account's) is asked
 * before each relay and bridge, with no database connection held while it waits (docs/design.md#intercept).
 * A sender with no live session on a number dedicated to an account is that account's
 * `interaction.out_of_session` event; on a shared number only the configured answer is given. A participant
 * on the number a session rescue moved their session off gets the out-of-session answer too, and the account
 * the event (docs/design.md#session-rescue): nothing is relayed from an old number.
 */
@Injectable()
export class RelayService {
  private readonly logger = new Logger(RelayService.name);

  constructor(
    private readonly interactions: InteractionRepository,
    private readonly sessions: SessionRepository,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly registry: ProviderRegistry,
    private readonly intercept: InterceptClient,
    private readonly relayLimit: SessionRelayLimit,
    @Inject(ProxyNumberRepository) private readonly numbers: Pick<ProxyNumberRepository, 'poolNumber'>,
    @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  async inbound(provider: string, event: InboundEvent): Promise<InboundAnswer> {
    const now = new Date(this.clock.now());
    const routed = await this.sessions.findActiveFor(provider, event.to, event.from, now);
    if (!routed) {
      // A participant on the number a rescue moved their session off (its provider is back): never relayed from there.
      const moved = await this.sessions.findMovedFrom(provider, event.to, event.from, now);
      if (moved) return this.reachedOldNumber(provider, moved, event, now);
      // A number this provider's pool does not hold is no proxy of ours: nobody to answer for.
      const number = await this.numbers.poolNumber(provider, event.to);
      if (!number) return { kind: 'not-our-number' };
      // Only the account a number is dedicated to may learn who writes to it; a shared number tells nobody.
      if (number.accountId) await this.interactions.recordEvent(interactionOutOfSession(number.accountId, provider, event, now));
      return this.outOfSession(provider, event);
    }
    const { session } = routed;
    const other = session.participants.find((n) => n !== event.from)!;
    // Past the session's relay rate: neither relayed nor recorded.
    const waitMs = this.relayLimit.take(session.id);
    if (waitMs > 0) return this.overRelayLimit(provider, event, waitMs);
    const inbound = (status: NewInteraction['status'], extra: Partial<NewInteraction> = {}) =>
      inboundInteraction(session, event, status, extra);

    if (!session.channels.includes(event.channel)) {
      await this.interactions.record(inbound('out-of-session', { activity: false }), now, (interaction) =>
        interactionOutOfSession(session.accountId, provider, event, now, { session, interaction }),
      );
      return this.outOfSession(provider, event);
    }

    if (routed.interceptUrl) {
      const decision = await this.ask(routed, inbound('pending'), now);
      if (decision.verdict === 'block') {
        const blocked = inbound('blocked', { lastError: `blocked: ${decision.detail}` });
        const recorded = await this.interactions.record(blocked, now, (interaction) => interactionBlocked(session, interaction, decision));
        // A call gets the out-of-session answer; a text is acknowledged to its provider and goes nowhere.
        if (event.channel === 'voice' || !recorded) return this.outOfSession(provider, event);
        return { kind: 'answer', answer: this.registry.webhooks(provider).smsAnswer({ kind: 'out-of-session' }) };
      }
    }

    if (event.channel === 'voice') {
      const bridged = await this.interactions.record(inbound('bridged', { providerRef: event.callId }), now);
      // Past its end between the lookup and the record (the clock moved on): no bridge for a session that is over.
      if (!bridged) return this.outOfSession(provider, event);
      if (!bridged.repeat) await this.bridgeByCall(session, event, other);
      return {
        kind: 'answer',
        answer: this.registry
          .webhooks(session.provider)
          .voiceBridgeInstruction({ to: other, callerId: session.proxyNumber, callId: event.callId }),
      };
    }

    const recorded = await this.interactions.record(inbound('pending'), now);
    if (!recorded) return this.outOfSession(provider, event);
    if (recorded.interaction.status === 'pending') await this.attempt(recorded.interaction.id);
    const current = await this.interactions.get(recorded.interaction.id);
    const kind = current.status === 'pending' ? 'queued' : 'relayed';
    return { kind: 'answer', answer: this.registry.webhooks(provider).smsAnswer({ kind, interactionId: current.id }) };
  }

  /**
   * An inbound on a number `session` was moved off: the out-of-session answer from that number, recorded on the session
   * as `out-of-session`, and the account's `interaction.out_of_session` saying where the session is now.
   */
  private async reachedOldNumber(provider: string, session: Session, event: InboundEvent, now: Date): Promise<InboundAnswer> {
    await this.interactions.record(
      inboundInteraction(session, event, 'out-of-session', {
        lastError: `reached ${event.to} on ${provider}, which the session was moved off`,
        activity: false,
      }),
      now,
      (interaction) =>
        interactionOutOfSession(session.accountId, provider, event, now, { session, interaction, reason: 'session-rebound' }),
    );
    return this.outOfSession(provider, event);
  }

  /** The intercept, asked about the interaction it is about to record: `{ session, interaction }`, signed for the session's account. */
  private ask(routed: RoutedSession, interaction: NewInteraction, now: Date): Promise<InterceptDecision> {
    const { session } = routed;
    return this.intercept.ask({
      url: routed.interceptUrl!,
      accountId: session.accountId,
      id: interaction.id,
      data: {
        session: SessionDto.from(session, now),
        interaction: {
          id: interaction.id,
          channel: interaction.channel,
          from: interaction.from,
          to: interaction.to,
          ...(interaction.text !== null ? { text: interaction.text } : {}),
          createdAt: now.toISOString(),
        },
      },
    });
  }

  /**
   * What the provider tells us about a relayed message or a bridged call. A bridged call's outcome
   * feeds the provider's breaker once, when it first arrives (docs/design.md#relay): `call.failed` is a
   * call-setup failure, any answer a success.
   */
  async status(provider: string, event: StatusEvent): Promise<boolean> {
    if (event.type === 'message.progress') return this.interactions.hasRef(provider, event.messageId);
    if (event.type === 'call.progress') return this.interactions.hasRef(provider, event.callId);
    if (event.type !== 'call.completed' && event.type !== 'call.failed') return this.messageOutcome(provider, event);
    const recorded = await this.callOutcome(provider, event);
    if (recorded === 'first') {
      this.registry.record(
        provider,
        'call',
        false,
        event.type === 'call.failed'
          ? {
              ok: false,
              failure: new ProviderCallFailure(provider, { countsAgainstProvider: true, cause: 'call-setup' }, `${event.reason} on call`),
            }
          : { ok: true, latencyMs: 0 },
      );
    }
    return recorded !== 'unmatched';
  }

  private async messageOutcome(
    provider: string,
    event: Extract<StatusEvent, { type: 'message.delivered' | 'message.undelivered' | 'message.failed' }>,
  ): Promise<boolean> {
    return this.interactions.transaction(async (tx) => {
      const interaction = await tx.lockByRef(provider, event.messageId);
      if (!interaction) return false;
      if (interaction.status !== 'relayed') return true; // already told, or not sent by us yet
      if (event.type === 'message.delivered') {
        await tx.update(interaction.id, { status: 'delivered' });
        return true;
      }
      // The vendor took the message but could not hand it over: the customer hears of it once.
      const outcome = event.type === 'message.undelivered' ? 'undelivered' : 'failed';
      const reason = `${outcome} by ${provider}${event.errorCode ? ` (error ${event.errorCode})` : ''}`;
      await tx.update(interaction.id, { status: outcome, lastError: reason });
      const session = await tx.sessionOf(interaction);
      await tx.record(
        sessionEvent('message.failed', session, {
          sessionId: session.id,
          interactionId: interaction.id,
          from: interaction.from,
          to: interaction.to,
          attempts: interaction.attempts,
          reason,
        }),
      );
      return true;
    });
  }

  /** `first` when this event settled the bridged call, `again` when it had been settled already. */
  private async callOutcome(
    provider: string,
    event: Extract<StatusEvent, { type: 'call.completed' | 'call.failed' }>,
  ): Promise<'first' | 'again' | 'unmatched'> {
    return this.interactions.transaction(async (tx) => {
      const interaction = await tx.lockByRef(provider, event.callId);
      if (!interaction) return 'unmatched';
      if (interaction.status !== 'bridged') return 'again'; // already told
      const failed = event.type === 'call.failed';
      const status: InteractionStatus = failed ? 'failed' : event.answer;
      const durationSec = failed ? 0 : event.durationSec;
      await tx.update(interaction.id, { status, durationSec, lastError: failed ? `${provider}: ${event.reason}` : null });
      const session = await tx.sessionOf(interaction);
      await tx.record(
        sessionEvent('call.completed', session, {
          sessionId: session.id,
          interactionId: interaction.id,
          from: interaction.from,
          to: interaction.to,
          answer: failed ? 'failed' : event.answer,
          durationSec,
        }),
      );
      return 'first';
    });
  }

  /** Tries one pending SMS relay now; on failure it is rescheduled with backoff. */
  async attempt(interactionId: string): Promise<void> {
    const claimed = await this.interactions.transaction(async (tx) => {
      const interaction = await tx.claimPending(interactionId);
      if (!interaction) return null;
      const session = await tx.sessionOf(interaction);
      if (session.status !== 'active' || session.inactiveAt.getTime() <= this.clock.now()) {
        await this.giveUp(tx, interaction, session, 'the session ended before the message could be relayed');
        return null;
      }
      // Hold the row while the provider is asked: another replica's retry must not send it twice.
      await tx.update(interaction.id, { attempts: interaction.attempts + 1, nextAttemptAt: this.retryAt(interaction.attempts + 1) });
      return { interaction, session };
    });
    if (!claimed) return;
    const { interaction, session } = claimed;
    const sent = await this.registry.call(session.provider, 'sms', false, (p) =>
      p.sendSms({ from: session.proxyNumber, to: interaction.to, text: interaction.text ?? '' }),
    );
    await this.interactions.transaction(async (tx) => {
      if (sent.ok) {
        await tx.update(interaction.id, { status: 'relayed', providerRef: sent.value.messageId, nextAttemptAt: null, lastError: null });
        await tx.record(
          sessionEvent(
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
          ),
        );
      } else if (!sent.failure.countsAgainstProvider) {
        // The provider refused the message itself (an invalid or unsubscribed number): retrying cannot help.
        await this.giveUp(
          tx,
          { ...interaction, attempts: interaction.attempts + 1, lastError: sent.failure.reason },
          session,
          sent.failure.reason,
        );
      } else {
        await tx.update(interaction.id, { lastError: sent.failure.reason });
        this.logger.warn(
          { interactionId: interaction.id, sessionId: session.id, provider: session.provider },
          `relay ${interaction.id} on ${session.provider} failed (${sent.failure.reason}); retrying`,
        );
      }
    });
  }

  /** Retries the relays that are due; run by one replica at a time. Returns how many were tried. */
  async retryDue(): Promise<number> {
    const due = await this.interactions.due(CLAIM_BATCH);
    for (const id of due) await this.attempt(id);
    return due.length;
  }

  private retryAt(attempts: number): Date {
    const delay = Math.min(this.config.sessions.relayRetryIntervalMs * 2 ** (attempts - 1), MAX_RETRY_DELAY_MS);
    return new Date(this.clock.now() + delay);
  }

  private async giveUp(tx: InteractionTransaction, interaction: Interaction, session: Session, reason: string): Promise<void> {
    await tx.update(interaction.id, { status: 'failed', nextAttemptAt: null, lastError: interaction.lastError ?? reason });
    await tx.record(
      sessionEvent(
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
      ),
    );
  }

  /**
   * A vendor that bridges by an API call (Infobip's dialogs) is asked once per call however often it sends the
   * webhook: the request's outcome feeds the breaker now; a refusal settles the call as failed (the breaker has
   * it already, from the request itself).
   */
  private async bridgeByCall(session: Session, event: Extract<InboundEvent, { channel: 'voice' }>, to: string): Promise<void> {
    if (!this.registry.webhooks(session.provider).bridgesByCall) return;
    const placed = await this.registry.call(session.provider, 'call', false, (p) =>
      p.bridgeCall!({ from: session.proxyNumber, to, inboundCallId: event.callId }),
    );
    if (placed.ok) return;
    await this.callOutcome(session.provider, {
      type: 'call.failed',
      eventId: `${event.callId}:bridge`,
      callId: event.callId,
      from: event.from,
      to,
      reason: `the bridge could not be requested (${placed.failure.cause}${placed.failure.status ? `, HTTP ${placed.failure.status}` : ''})`,
      at: event.at,
    });
  }

  /** Neither relayed nor recorded: the vendor's own refusal (TwiML `<Reject/>`, an empty `<Response/>`), else a 429. */
  private overRelayLimit(provider: string, event: InboundEvent, retryAfterMs: number): InboundAnswer {
    const answer = this.registry.webhooks(provider).noSessionAnswer(event.channel);
    return answer ? { kind: 'answer', answer } : { kind: 'rate-limited', retryAfterMs };
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
}

/** An inbound text or call as the session's interaction, from its sender to the other participant; `extra` overrides. */
function inboundInteraction(
  session: Session,
  event: InboundEvent,
  status: NewInteraction['status'],
  extra: Partial<NewInteraction> = {},
): NewInteraction {
  return {
    id: interactionIdFor(session.id, event.eventId),
    sessionId: session.id,
    channel: event.channel,
    from: event.from,
    to: session.participants.find((n) => n !== event.from)!,
    text: event.channel === 'sms' ? event.text : null,
    status,
    eventId: event.eventId,
    providerRef: null,
    idempotencyKey: null,
    lastError: null,
    activity: true,
    ...extra,
  };
}
