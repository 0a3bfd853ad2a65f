import {
  applyDecorators,
  createParamDecorator,
  Injectable,
  SetMetadata,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type Type,
} from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import { ProblemException, type ProblemDetails } from '../common/problem';
import { MAX_BODY_DEPTH, nestsDeeperThan } from '../common/problem/validation';
import { IdempotencyService, Replay } from './idempotency.service';

const REPLAYED_HEADER = 'Idempotent-Replayed';
const KEY_HEADER = 'idempotency-key';
const IDEMPOTENT_ROUTE = Symbol('idempotent-route');
/** Nest marks a request its pipes refused (a registered symbol, read by interceptors that prepared something for the handler). */
const REJECTED_BY_PIPES = Symbol.for('nestjs:rejected-by-pipes');

/** A request with an Idempotency-Key, as a route's `boundTo` and `recover` see it. */
interface KeyedRequest {
  readonly accountId: string;
  readonly key: string;
  readonly request: Request;
}

/** How a route takes `Idempotency-Key` (see `Idempotent`). */
interface IdempotentRoute<S> {
  /** What the key is bound to besides the account: the request body unless the route says otherwise. */
  boundTo?: (request: Request) => unknown;
  /** The service that knows what a first request with the key, dead since, had already done. */
  recoverFrom: Type<S>;
  /** Asked when a key is taken over from a request that died: its answer, if it had made one; else the route runs again. */
  recover: (service: S, keyed: KeyedRequest) => Promise<unknown>;
}

/**
 * Marks a route that honours `Idempotency-Key` (docs/design.md#idempotency-and-crash-takeover): with the
 * header, IdempotencyService decides whether the handler runs or the key's kept answer is sent again; without
 * it the route runs as it is. Per route, not global: a global interceptor costs every request (common/http/request-body.ts).
 */
export function Idempotent<S>(route: IdempotentRoute<S>): MethodDecorator {
  return applyDecorators(
    SetMetadata(IDEMPOTENT_ROUTE, route),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Same key and body within 24 h replays the first answer.' }),
  );
}

/** A handler parameter: the request's Idempotency-Key, or null; for the service to keep with what it makes. */
export const IdempotencyKey = createParamDecorator(
  (_: unknown, context: ExecutionContext): string | null => context.switchToHttp().getRequest<Request>().get(KEY_HEADER) ?? null,
);

/** A refusal of the route's pipes, carried through IdempotencyService as no answer: the key is let go, nothing kept. */
class RefusedByPipes extends Error {
  constructor(readonly refusal: unknown) {
    super('refused by the route’s pipes');
  }
}

/** `Idempotency-Key` on the routes marked `@Idempotent`: the HTTP side of IdempotencyService. */
@Injectable()
class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    // ApiKeyGuard, which runs before any interceptor, has put the account on the request.
    const request = http.getRequest<Request & { principal: { accountId: string } }>();
    const key = request.get(KEY_HEADER);
    // A body nested deeper than the pipes take is not hashed: they refuse it as they would without a key.
    if (key === undefined || nestsDeeperThan(request.body, MAX_BODY_DEPTH)) return next.handle();
    const route = this.reflector.get<IdempotentRoute<unknown>>(IDEMPOTENT_ROUTE, context.getHandler());
    const response = http.getResponse<Response>();
    const keyed: KeyedRequest = { accountId: request.principal.accountId, key, request };
    // Nest has set the route's success status (its @HttpCode, 201 for a POST) before the interceptors run.
    const status = response.statusCode;
    const work = async () => {
      try {
        return await lastValueFrom(next.handle());
      } catch (error) {
        throw isRejectedByPipes(request) ? new RefusedByPipes(error) : error;
      }
    };
    const recover = async () => (await route.recover(this.moduleRef.get(route.recoverFrom, { strict: false }), keyed)) ?? null;
    const answer = async () => {
      try {
        const result = await this.idempotency.run(keyed.accountId, key, (route.boundTo ?? bodyOf)(request), work, recover, status);
        return result instanceof Replay ? replay(result, response) : result;
      } catch (error) {
        throw error instanceof RefusedByPipes ? error.refusal : error;
      }
    };
    return defer(answer);
  }
}

function bodyOf(request: Request): unknown {
  return request.body;
}

function isRejectedByPipes(request: Request): boolean {
  return (request as Request & { [REJECTED_BY_PIPES]?: boolean })[REJECTED_BY_PIPES] === true;
}

/** The kept answer, as first sent: a 4xx problem whole, with its extensions (`errors`, `provider`...). */
function replay({ status, body }: Replay, response: Response): unknown {
  response.setHeader(REPLAYED_HEADER, 'true');
  if (status >= 400) {
    const { type, title, detail, status: _status, ...extensions } = JSON.parse(body) as ProblemDetails;
    throw new ProblemException({
      status: status,
      title: title,
      detail: detail,
      slug: String(type).replace(/^\/problems\//, ''),
      extensions: extensions,
    });
  }
  response.status(status);
  return JSON.parse(body);
}
