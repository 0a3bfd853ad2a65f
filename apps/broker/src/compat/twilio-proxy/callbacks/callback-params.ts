/**
 * The form parameters of Twilio Proxy's callbacks (its webhooks page): the Service's CallbackUrl is told of an
 * interaction, its InterceptCallbackUrl asked before one is relayed, its OutOfSessionCallbackUrl told of a
 * text or call that reached one of its numbers with no live session there. Parameters without a value are
 * left out, as Twilio leaves them empty.
 */
import { twilioSid } from '../../../common/twilio-sid';
import type { Channel } from '../../../numbers/proxy-number.entity';
import { twilioDate } from '../http/compat-urls';
import { OUTBOUND_STATUS, interactionData } from '../interactions/interaction.resource';
import type { InteractionRow } from '../interactions/proxy-interaction.repository';
import type { CallbackContext } from './proxy-callback.repository';

const RESOURCE_SID = /^[a-zA-Z]{2}[0-9a-fA-F]{32}$/;

function defined(params: Record<string, string | null | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function participantSid(context: CallbackContext, number: string): string | undefined {
  const participant = [...context.participants].reverse().find((p) => p.identifier === number);
  return participant ? twilioSid('KP', participant.id) : undefined;
}

function interactionIds(context: CallbackContext, interactionId: string, channel: Channel): Record<string, string> {
  return {
    interactionSid: twilioSid('KI', interactionId),
    interactionSessionSid: twilioSid('KC', context.session.id),
    interactionServiceSid: twilioSid('KS', context.session.serviceId),
    interactionAccountSid: twilioSid('AC', context.session.accountId),
    interactionType: channel === 'sms' ? 'Message' : 'Voice',
  };
}

/** CallbackUrl: an interaction as it stands now (sent, delivered or failed; a call's outcome). */
export function interactionCallbackParams(context: CallbackContext, interaction: InteractionRow): Record<string, string> {
  const message = interaction.channel === 'sms';
  const inbound = interaction.providerEventId !== null;
  const outboundStatus = OUTBOUND_STATUS[interaction.status];
  return defined({
    ...interactionIds(context, interaction.id, interaction.channel),
    interactionData: interactionData(interaction),
    interactionDateCreated: twilioDate(interaction.createdAt),
    interactionDateUpdated: twilioDate(interaction.updatedAt),
    inboundParticipantSid: inbound ? participantSid(context, interaction.from) : undefined,
    inboundResourceSid:
      inbound && interaction.providerEventId && RESOURCE_SID.test(interaction.providerEventId) ? interaction.providerEventId : undefined,
    inboundResourceStatus: inbound ? (message ? 'delivered' : interaction.status === 'bridged' ? 'in-progress' : 'completed') : undefined,
    inboundResourceType: inbound ? (message ? 'message' : 'call') : undefined,
    outboundParticipantSid: participantSid(context, interaction.to),
    outboundResourceSid: interaction.providerRef && RESOURCE_SID.test(interaction.providerRef) ? interaction.providerRef : undefined,
    outboundResourceStatus: outboundStatus,
    outboundResourceType: outboundStatus === null ? undefined : message ? 'message' : 'call',
  });
}

/** What the intercept is asked about: an inbound text or call, before anything is relayed or bridged. */
export interface InterceptedInteraction {
  readonly id: string;
  readonly channel: Channel;
  readonly from: string;
  readonly to: string;
  readonly text?: string;
  readonly createdAt: string;
}

/** InterceptCallbackUrl: the interaction about to be relayed; a 403 blocks it. */
export function interceptParams(context: CallbackContext, interaction: InterceptedInteraction): Record<string, string> {
  const message = interaction.channel === 'sms';
  const at = twilioDate(new Date(interaction.createdAt));
  return defined({
    ...interactionIds(context, interaction.id, interaction.channel),
    interactionData: message && interaction.text !== undefined ? JSON.stringify({ body: interaction.text }) : undefined,
    interactionDateCreated: at,
    interactionDateUpdated: at,
    inboundParticipantSid: participantSid(context, interaction.from),
    inboundResourceStatus: message ? 'received' : 'ringing',
    inboundResourceType: message ? 'message' : 'call',
    outboundParticipantSid: participantSid(context, interaction.to),
  });
}

/** What the broker's `interaction.out_of_session` event says of a text or call no session took. */
interface OutOfSessionInbound {
  readonly channel: Channel;
  readonly from: string;
  readonly proxyNumber: string;
  readonly text?: string;
  /** The Proxy Session the sender is a participant of, when the text or call came on a channel it does not have. */
  readonly sessionId: string | null;
}

/**
 * OutOfSessionCallbackUrl: the inbound text or call as Twilio's own messaging or voice webhook carries it (From,
 * To, Body), and the Service (and Session, where there is one) it reached.
 */
export function outOfSessionParams(accountId: string, serviceId: string, inbound: OutOfSessionInbound): Record<string, string> {
  const message = inbound.channel === 'sms';
  return defined({
    AccountSid: twilioSid('AC', accountId),
    From: inbound.from,
    To: inbound.proxyNumber,
    Body: message ? (inbound.text ?? '') : undefined,
    NumMedia: message ? '0' : undefined,
    SmsStatus: message ? 'received' : undefined,
    CallStatus: message ? undefined : 'ringing',
    Direction: message ? undefined : 'inbound',
    interactionServiceSid: twilioSid('KS', serviceId),
    interactionSessionSid: inbound.sessionId ? twilioSid('KC', inbound.sessionId) : undefined,
    inboundResourceType: message ? 'message' : 'call',
  });
}
