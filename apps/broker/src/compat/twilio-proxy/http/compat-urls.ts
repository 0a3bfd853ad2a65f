import type { Request } from 'express';
import type { BrokerConfig } from '../../../config';

export const COMPAT_PREFIX = '/compat/twilio-proxy';

/**
 * Where this API's resources are, for the `url`, `links` and paging fields of its answers: TWILIO_PROXY_PUBLIC_URL,
 * else PUBLIC_URL + the prefix, else the address the request came to. The `twilio` package follows these as they are.
 */
export function compatBaseUrl(config: Pick<BrokerConfig, 'publicUrl' | 'twilioProxyPublicUrl'>, request: Request): string {
  if (config.twilioProxyPublicUrl) return config.twilioProxyPublicUrl;
  return `${config.publicUrl ?? `${request.protocol}://${request.get('host') ?? 'localhost'}`}${COMPAT_PREFIX}`;
}

/** Twilio writes instants to the second: `2015-07-30T20:00:00Z`. */
export function twilioDate(at: Date | null | undefined): string | null {
  return at ? at.toISOString().replace(/\.\d{3}Z$/, 'Z') : null;
}
