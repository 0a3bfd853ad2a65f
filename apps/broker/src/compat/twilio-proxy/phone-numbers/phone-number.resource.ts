import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { twilioSid } from '../../../common/twilio-sid';
import { twilioDate } from '../http/compat-urls';
import type { ServiceNumberView } from './proxy-service-number.repository';

/** A Service's number as Twilio's `proxy.v1.service.phone_number` schema has it; its sid is `PN` + the pool number's id. */
export function phoneNumberResource(base: string, number: ServiceNumberView): Record<string, unknown> {
  const sid = twilioSid('PN', number.proxyNumberId);
  const serviceSid = twilioSid('KS', number.serviceId);
  return {
    sid,
    account_sid: twilioSid('AC', number.accountId),
    service_sid: serviceSid,
    date_created: twilioDate(number.createdAt),
    date_updated: twilioDate(number.updatedAt),
    phone_number: number.number,
    friendly_name: number.number,
    iso_country: parsePhoneNumberFromString(number.number)?.country ?? null,
    capabilities: { sms: number.capabilities.includes('sms'), voice: number.capabilities.includes('voice'), mms: false, fax: false },
    url: `${base}/v1/Services/${serviceSid}/PhoneNumbers/${sid}`,
    is_reserved: number.isReserved,
    in_use: number.inUse,
  };
}
