import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyGuard, type Principal } from '../../../accounts';
import { READS_BODY_AFTER_AUTHENTICATION } from '../../../common/http';
import { uuidOfTwilioSid } from '../../../common/twilio-sid';
import { BROKER_CONFIG, type BrokerConfig } from '../../../config';
import { compatBaseUrl } from './compat-urls';
import type { CompatCaller } from './twilio-proxy-controller';
import { TWILIO_CODES, TwilioApiError } from './twilio-error';

export type CompatRequest = Request & { principal?: Principal; compatCaller?: CompatCaller };

function unauthorized(message: string): TwilioApiError {
  return new TwilioApiError(401, TWILIO_CODES.authenticate, message);
}

/**
 * Twilio's Basic auth: the account's Twilio-style sid (`GET /v1/account` shows it) as the user name, one of
 * its API keys as the password. The key is checked by the broker's own ApiKeyGuard, so the compat routes
 * share its wrong-key throttle, its per-key rate limits and its body reading (after authentication only);
 * the sid must then name the key's own account.
 */
@Injectable()
export class TwilioBasicAuthGuard implements CanActivate {
  static readonly [READS_BODY_AFTER_AUTHENTICATION] = true;

  constructor(
    private readonly apiKeys: ApiKeyGuard,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<CompatRequest>();
    const credentials = basicCredentials(request.headers.authorization);
    if (!credentials) throw unauthorized('Authenticate: send the account sid and an API key as HTTP Basic credentials.');
    const accountId = uuidOfTwilioSid('AC', credentials.user);
    if (!accountId) throw unauthorized('Authenticate: the user name must be the account sid (AC…, GET /v1/account shows it).');
    // ApiKeyGuard reads the key where the broker's own clients send it; the header is redacted from logs either way.
    request.headers.authorization = `Bearer ${credentials.password}`;
    await this.apiKeys.canActivate(context);
    if (request.principal?.accountId !== accountId) throw unauthorized('Authenticate: the account sid is not the API key’s account.');
    request.compatCaller = { accountId, base: compatBaseUrl(this.config, request) };
    return true;
  }
}

/** `Basic base64(user:password)`, or null when the header is not that. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | null {
  const match = typeof header === 'string' ? /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header) : null;
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
