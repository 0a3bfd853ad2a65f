/**
 * The broker's interactions in Twilio's shapes (`proxy.v1.service.session.interaction` and
 * `…participant.message_interaction`): sids `KI` + the interaction's id, the participants' `KP` sids, the
 * text as `data` (`{"body": …}`, gone once erased) or a call's duration, and the broker's statuses in
 * Twilio's words. A provider's own id is given as the resource sid only where it has Twilio's form (a real
 * Twilio message or call sid); no resource URL is given: the resource is the provider's, not Twilio's.
 */
import { twilioSid } from '../../../common/twilio-sid';
import type { InteractionStatus } from '../../../relay/interaction.entity';
import { twilioDate } from '../http/compat-urls';
import type { ProxyParticipant } from '../sessions/proxy-participant.entity';
import type { ProxySession } from '../sessions/proxy-session.entity';
import type { InteractionRow } from './proxy-interaction.repository';

const RESOURCE_SID = /^[a-zA-Z]{2}[0-9a-fA-F]{32}$/;

/** Twilio's resource status for what the broker's relay says of the outbound side; null when nothing went out. */
export const OUTBOUND_STATUS: Record<InteractionStatus, string | null> = {
  pending: 'queued',
  relayed: 'sent',
  delivered: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  bridged: 'in-progress',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no-answer',
  // Twilio reports a callee who rejects the call as busy.
  declined: 'busy',
  canceled: 'canceled',
  blocked: null,
  'out-of-session': null,
};

export interface InteractionContext {
  readonly base: string;
  readonly session: ProxySession;
  /** Every participant the Session had, removed ones too. */
  readonly participants: readonly ProxyParticipant[];
}

export function interactionData(interaction: Pick<InteractionRow, 'channel' | 'text' | 'durationSec'>): string | null {
  if (interaction.channel === 'sms') return interaction.text === null ? null : JSON.stringify({ body: interaction.text });
  return interaction.durationSec === null ? null : JSON.stringify({ duration: String(interaction.durationSec) });
}

/**
 * Twilio's description types the resource statuses as its enum, which has no null: a status there is none of is
 * left out (its examples show null; the `twilio` package reads either as empty).
 */
function withoutEmptyStatuses(resource: Record<string, unknown>): Record<string, unknown> {
  for (const field of ['inbound_resource_status', 'outbound_resource_status']) if (resource[field] === null) delete resource[field];
  return resource;
}

export function interactionResource(context: InteractionContext, interaction: InteractionRow): Record<string, unknown> {
  const message = interaction.channel === 'sms';
  const from = participantWith(context, interaction.from);
  const to = participantWith(context, interaction.to);
  const inbound = interaction.providerEventId !== null;
  const sessionUrl = sessionUrlOf(context);
  return withoutEmptyStatuses({
    ...common(context, interaction),
    type: message ? 'message' : 'voice',
    inbound_participant_sid: inbound && from ? twilioSid('KP', from.id) : null,
    inbound_resource_sid:
      inbound && interaction.providerEventId && RESOURCE_SID.test(interaction.providerEventId) ? interaction.providerEventId : null,
    inbound_resource_status: inbound ? (message ? 'delivered' : interaction.status === 'bridged' ? 'in-progress' : 'completed') : null,
    inbound_resource_type: inbound ? (message ? 'Message' : 'Call') : null,
    inbound_resource_url: null,
    outbound_participant_sid: to ? twilioSid('KP', to.id) : null,
    outbound_resource_sid: outboundSid(interaction),
    outbound_resource_status: OUTBOUND_STATUS[interaction.status],
    outbound_resource_type: OUTBOUND_STATUS[interaction.status] === null ? null : message ? 'Message' : 'Call',
    outbound_resource_url: null,
    url: `${sessionUrl}/Interactions/${twilioSid('KI', interaction.id)}`,
  });
}

export function messageInteractionResource(
  context: InteractionContext,
  participant: ProxyParticipant,
  interaction: InteractionRow,
): Record<string, unknown> {
  const participantSid = twilioSid('KP', participant.id);
  return withoutEmptyStatuses({
    ...common(context, interaction),
    type: 'message',
    participant_sid: participantSid,
    inbound_participant_sid: null,
    inbound_resource_sid: null,
    inbound_resource_status: null,
    inbound_resource_type: null,
    inbound_resource_url: null,
    outbound_participant_sid: participantSid,
    outbound_resource_sid: outboundSid(interaction),
    outbound_resource_status: OUTBOUND_STATUS[interaction.status],
    outbound_resource_type: 'Message',
    outbound_resource_url: null,
    url: `${sessionUrlOf(context)}/Participants/${participantSid}/MessageInteractions/${twilioSid('KI', interaction.id)}`,
  });
}

function common(context: InteractionContext, interaction: InteractionRow): Record<string, unknown> {
  return {
    sid: twilioSid('KI', interaction.id),
    session_sid: twilioSid('KC', context.session.id),
    service_sid: twilioSid('KS', context.session.serviceId),
    account_sid: twilioSid('AC', context.session.accountId),
    data: interactionData(interaction),
    date_created: twilioDate(interaction.createdAt),
    date_updated: twilioDate(interaction.updatedAt),
  };
}

function outboundSid(interaction: InteractionRow): string | null {
  return interaction.providerRef && RESOURCE_SID.test(interaction.providerRef) ? interaction.providerRef : null;
}

function participantWith(context: InteractionContext, number: string): ProxyParticipant | undefined {
  // The latest one with this number: a removed participant may have been added again.
  return [...context.participants].reverse().find((p) => p.identifier === number);
}

function sessionUrlOf(context: InteractionContext): string {
  return `${context.base}/v1/Services/${twilioSid('KS', context.session.serviceId)}/Sessions/${twilioSid('KC', context.session.id)}`;
}
