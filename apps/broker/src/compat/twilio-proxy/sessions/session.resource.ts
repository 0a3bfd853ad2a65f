import { twilioSid } from '../../../common/twilio-sid';
import { twilioDate } from '../http/compat-urls';
import type { ProxyParticipant } from './proxy-participant.entity';
import type { ProxySessionView } from './proxy-session.repository';
import { firstDeadline, sessionState } from './session-rules';

/** A Session as Twilio's `proxy.v1.service.session` schema has it. */
export function sessionResource(base: string, view: ProxySessionView, now: Date): Record<string, unknown> {
  const { session, carrier } = view;
  const state = sessionState(view, now);
  const sid = twilioSid('KC', session.id);
  const serviceSid = twilioSid('KS', session.serviceId);
  const url = `${base}/v1/Services/${serviceSid}/Sessions/${sid}`;
  return {
    sid,
    service_sid: serviceSid,
    account_sid: twilioSid('AC', session.accountId),
    date_started: twilioDate(session.createdAt),
    date_ended: twilioDate(state.endedAt),
    date_last_interaction: twilioDate(carrier?.lastInteractionAt),
    // When it ends without another interaction: its deadline as the broker keeps it.
    date_expiry: twilioDate(carrier ? carrier.inactiveAt : firstDeadline(session)),
    unique_name: session.uniqueName,
    status: state.status,
    closed_reason: state.closedReason,
    ttl: session.ttl,
    mode: session.mode,
    date_created: twilioDate(session.createdAt),
    date_updated: twilioDate(session.updatedAt),
    url,
    links: { interactions: `${url}/Interactions`, participants: `${url}/Participants` },
  };
}

/** A Participant as Twilio's `proxy.v1.service.session.participant` schema has it; its proxy identifier is the carrier's number. */
export function participantResource(base: string, view: ProxySessionView, participant: ProxyParticipant): Record<string, unknown> {
  const { session, carrier } = view;
  const sid = twilioSid('KP', participant.id);
  const sessionSid = twilioSid('KC', session.id);
  const serviceSid = twilioSid('KS', session.serviceId);
  const url = `${base}/v1/Services/${serviceSid}/Sessions/${sessionSid}/Participants/${sid}`;
  const holds = participant.deletedAt === null && carrier !== null && carrier.participants.includes(participant.identifier);
  return {
    sid,
    session_sid: sessionSid,
    service_sid: serviceSid,
    account_sid: twilioSid('AC', session.accountId),
    friendly_name: participant.friendlyName,
    identifier: participant.identifier,
    proxy_identifier: holds ? carrier.proxyNumber : null,
    proxy_identifier_sid: holds ? twilioSid('PN', carrier.proxyNumberId) : null,
    date_deleted: twilioDate(participant.deletedAt),
    date_created: twilioDate(participant.createdAt),
    date_updated: twilioDate(participant.updatedAt),
    url,
    links: { message_interactions: `${url}/MessageInteractions` },
  };
}
