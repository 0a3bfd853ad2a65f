/**
 * The interaction events an account receives besides the relay's (`message.relayed`, `message.failed`,
 * `call.completed`): what the intercept blocked and why, and what reached one of its numbers out of session.
 */
import type { InboundEvent } from '@app/cpaas';
import type { SessionEventInput } from '../notifications';
import { sessionEvent } from '../sessions/session-events';
import type { Session } from '../sessions/session.entity';
import type { InterceptDecision } from '../intercept';
import type { Interaction } from './interaction.entity';

/** `interaction.blocked`: the intercept answered 403, or failed with INTERCEPT_ON_ERROR=block; nothing was relayed or bridged. */
export function interactionBlocked(session: Session, interaction: Interaction, decision: InterceptDecision): SessionEventInput {
  return sessionEvent(
    'interaction.blocked',
    session,
    {
      sessionId: session.id,
      interactionId: interaction.id,
      channel: interaction.channel,
      from: interaction.from,
      to: interaction.to,
      outcome: decision.outcome,
      reason:
        decision.outcome === 'blocked'
          ? `the intercept refused it (${decision.detail})`
          : `the intercept failed (${decision.detail}); INTERCEPT_ON_ERROR=block`,
    },
    interaction.createdAt,
  );
}

/** Why an inbound reached no relay: no live session, a channel the session lacks, or a number a rescue moved the session off. */
type OutOfSessionReason = 'no-session' | 'channel-not-in-session' | 'session-rebound';

/**
 * `interaction.out_of_session`: a text or call to a proxy number that reached no session's relay: a sender with
 * no live session on a number dedicated to the account (no session, no interaction), a participant on a
 * channel their session does not have, or a participant on the number a rescue moved their session off
 * (`session-rebound`, with where it is now); the last two carry the session and the interaction it was recorded
 * as. The sender got the configured out-of-session answer.
 */
export function interactionOutOfSession(
  accountId: string,
  provider: string,
  event: InboundEvent,
  receivedAt: Date,
  within?: { session: Session; interaction: Interaction; reason?: Exclude<OutOfSessionReason, 'no-session'> },
): SessionEventInput {
  const reason: OutOfSessionReason = within ? (within.reason ?? 'channel-not-in-session') : 'no-session';
  const data: Record<string, unknown> = {
    reason,
    sessionId: within?.session.id ?? null,
    interactionId: within?.interaction.id ?? null,
    channel: event.channel,
    from: event.from,
    proxyNumber: event.to,
    provider,
    ...(event.channel === 'sms' ? { text: event.text } : {}),
    ...(reason === 'session-rebound' ? { movedTo: { provider: within!.session.provider, proxyNumber: within!.session.proxyNumber } } : {}),
  };
  if (within) return sessionEvent('interaction.out_of_session', within.session, data, receivedAt);
  return { type: 'interaction.out_of_session', accountId, sessionId: null, callbackUrl: null, data, receivedAt };
}
