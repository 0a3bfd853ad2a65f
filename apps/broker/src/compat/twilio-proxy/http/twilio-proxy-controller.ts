import { Controller, UseFilters, UseGuards, applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { COMPAT_PREFIX } from './compat-urls';
import { TwilioBasicAuthGuard, type CompatRequest } from './twilio-basic-auth.guard';
import { TwilioErrorFilter } from './twilio-error';

/**
 * A controller of Twilio Proxy's v1 routes at `path` under `/compat/twilio-proxy/v1/`: Twilio's Basic auth, Twilio's
 * error bodies, and left out of the broker's own OpenAPI document (twilio_proxy_v1.json describes these).
 */
export function TwilioProxyController(path: string): ClassDecorator {
  return applyDecorators(
    ApiExcludeController(),
    UseGuards(TwilioBasicAuthGuard),
    UseFilters(TwilioErrorFilter),
    Controller(`${COMPAT_PREFIX.slice(1)}/v1/${path}`),
  );
}

/** Who calls (the account TwilioBasicAuthGuard let through) and where the API's resources are for them. */
export interface CompatCaller {
  readonly accountId: string;
  /** `…/compat/twilio-proxy` as the caller reaches it: the base of every `url` and paging URL in the answer. */
  readonly base: string;
}

export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): CompatCaller => {
  const caller = context.switchToHttp().getRequest<CompatRequest>().compatCaller;
  if (!caller) throw new Error('Caller used on a route without TwilioBasicAuthGuard');
  return caller;
});
