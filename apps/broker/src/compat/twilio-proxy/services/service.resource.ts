import { twilioSid } from '../../../common/twilio-sid';
import { twilioDate } from '../http/compat-urls';
import type { ProxyService } from './proxy-service.entity';

/** A Service as Twilio's `proxy.v1.service` schema has it. */
export function serviceResource(base: string, service: ProxyService): Record<string, unknown> {
  const sid = twilioSid('KS', service.id);
  const url = `${base}/v1/Services/${sid}`;
  return {
    sid,
    unique_name: service.uniqueName,
    account_sid: twilioSid('AC', service.accountId),
    chat_instance_sid: null,
    callback_url: service.callbackUrl,
    default_ttl: service.defaultTtl,
    number_selection_behavior: service.numberSelectionBehavior,
    geo_match_level: service.geoMatchLevel,
    intercept_callback_url: service.interceptCallbackUrl,
    out_of_session_callback_url: service.outOfSessionCallbackUrl,
    date_created: twilioDate(service.createdAt),
    date_updated: twilioDate(service.updatedAt),
    url,
    links: { sessions: `${url}/Sessions`, phone_numbers: `${url}/PhoneNumbers` },
  };
}
