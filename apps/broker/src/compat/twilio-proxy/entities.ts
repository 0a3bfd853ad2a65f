import { ProxyServiceNumber } from './phone-numbers/proxy-service-number.entity';
import { ProxyService } from './services/proxy-service.entity';
import { ProxyParticipant } from './sessions/proxy-participant.entity';
import { ProxySession } from './sessions/proxy-session.entity';

/** The Twilio-Proxy-compatible API's tables, for the broker's ENTITIES list. */
export const TWILIO_PROXY_ENTITIES = [ProxyService, ProxyServiceNumber, ProxySession, ProxyParticipant];
