import { CanActivate, ExecutionContext, Inject, Injectable, createParamDecorator } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { READS_BODY_AFTER_AUTHENTICATION, RequestBodyReader, clientAddress } from '../common/http';
import { PROBLEM_CONTENT_TYPE, ProblemException } from '../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { AccountsService, type Principal } from './accounts.service';
import { RateLimits } from './rate-limits';

type AuthenticatedRequest = Request & { principal?: Principal };

function bearer(request: Request): string | undefined {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match?.[1];
}

function unauthorized(detail: string): ProblemException {
  return new ProblemException({ status: 401, slug: 'unauthorized', title: 'Unauthorized', detail });
}

/**
 * A wrong API key, admin token or METRICS_TOKEN: 401, or 429 once the client address has sent more wrong
 * ones than its budget (RATE_LIMIT_AUTH_FAILURES_*). Only failures are throttled: the credential is checked
 * first, so a valid key or token is never refused here, whoever else shares the address (a load balancer, a NAT).
 */
function refuseWrongCredential(rateLimits: RateLimits, request: Request, response: Response, detail: string): ProblemException {
  const waitMs = rateLimits.noteAuthFailure(clientAddress(request));
  if (waitMs === 0) return unauthorized(detail);
  const seconds = Math.ceil(waitMs / 1000);
  response.setHeader('Retry-After', String(seconds));
  return new ProblemException({
    status: 429,
    title: 'Too many wrong credentials',
    detail: `This address sent more wrong API keys or tokens than RATE_LIMIT_AUTH_FAILURES_BURST allows; retry in ${seconds} s.`,
    slug: 'rate-limited',
  });
}

function sameSecret(given: string, expected: Buffer): boolean {
  const candidate = Buffer.from(given);
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}

/** `Authorization: Bearer <api key>`: the request acts for the key's account. Reads the body once the key is accepted. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  static readonly [READS_BODY_AFTER_AUTHENTICATION] = true;
  private readonly body: RequestBodyReader;

  constructor(
    private readonly accounts: AccountsService,
    private readonly rateLimits: RateLimits,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
  ) {
    this.body = new RequestBodyReader(config);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const key = bearer(request);
    if (!key) throw unauthorized('Send your API key as "Authorization: Bearer <key>".');
    const principal = await this.accounts.authenticate(key);
    if (!principal)
      throw refuseWrongCredential(
        this.rateLimits,
        request,
        context.switchToHttp().getResponse<Response>(),
        'The API key is unknown or revoked.',
      );
    request.principal = principal;
    const waitMs = this.rateLimits.take(principal.apiKeyId, request.method === 'GET' || request.method === 'HEAD' ? 'reads' : 'creates');
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      context.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(seconds));
      throw new ProblemException({
        status: 429,
        slug: 'rate-limited',
        title: 'Rate limit reached',
        detail: `This API key sent more ${request.method === 'GET' || request.method === 'HEAD' ? 'reads' : 'creates'} than its rate allows; retry in ${seconds} s.`,
      });
    }
    await this.body.read(request, context.switchToHttp().getResponse<Response>(), true);
    return true;
  }
}

/** Admin routes: `Authorization: Bearer <ADMIN_TOKEN>`; refused outright while ADMIN_TOKEN is unset. Reads the body once the token is accepted. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  static readonly [READS_BODY_AFTER_AUTHENTICATION] = true;
  private readonly token?: Buffer;
  private readonly body: RequestBodyReader;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly rateLimits: RateLimits,
  ) {
    this.token = config.adminToken ? Buffer.from(config.adminToken) : undefined;
    this.body = new RequestBodyReader(config);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.token)
      throw new ProblemException({
        status: 403,
        slug: 'admin-disabled',
        title: 'Admin API disabled',
        detail: 'Set ADMIN_TOKEN to use the admin API.',
      });
    const request = context.switchToHttp().getRequest<Request>();
    const given = bearer(request);
    if (!given) throw unauthorized('Send the admin token as "Authorization: Bearer <token>".');
    if (!sameSecret(given, this.token))
      throw refuseWrongCredential(this.rateLimits, request, context.switchToHttp().getResponse<Response>(), 'The admin token is wrong.');
    await this.body.read(request, context.switchToHttp().getResponse<Response>(), true);
    return true;
  }
}

/**
 * METRICS_TOKEN: `/metrics` and the API docs (`/docs`, served by Swagger outside Nest's routing, hence an
 * Express middleware) answer only `Authorization: Bearer <METRICS_TOKEN>`; wrong ones count as wrong
 * credentials, as the other tokens' do.
 */
export function requireMetricsToken(
  token: string,
  rateLimits: RateLimits,
): (request: Request, response: Response, next: () => void) => void {
  const expected = Buffer.from(token);
  return (request, response, next) => {
    const given = bearer(request);
    if (given !== undefined && sameSecret(given, expected)) return next();
    const problem = (
      given === undefined
        ? unauthorized('Send METRICS_TOKEN as "Authorization: Bearer <token>".')
        : refuseWrongCredential(rateLimits, request, response, 'The metrics token is wrong.')
    ).toProblem();
    if (problem.status === 401) response.setHeader('WWW-Authenticate', 'Bearer');
    response.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  };
}

/** The authenticated account of a route guarded by ApiKeyGuard. */
export const CurrentPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route without ApiKeyGuard');
  return principal;
});
