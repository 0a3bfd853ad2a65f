import { createParamDecorator, Injectable, type ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ProblemException, type ProblemDetails } from '../common/problem';
import { IdempotencyService, Replay } from './idempotency.service';

const REPLAYED_HEADER = 'Idempotent-Replayed';
const KEY_HEADER = 'idempotency-key';

/** A request's Idempotency-Key (null without one) and the exchange it came on: what `IdempotentAnswers.answer` takes. */
export interface IdempotentExchange {
  readonly key: string | null;
  readonly request: Request;
  readonly response: Response;
}

/** A handler parameter: the request's Idempotency-Key with its exchange (`IdempotentExchange`). */
export const Idempotency = createParamDecorator((_: unknown, context: ExecutionContext): IdempotentExchange => {
  const http = context.switchToHttp();
  const request = http.getRequest<Request>();
  return { key: request.get(KEY_HEADER) ?? null, request, response: http.getResponse<Response>() };
});

/** Documents the header on a route whose handler answers through `IdempotentAnswers`. */
export const AcceptsIdempotencyKey = (): MethodDecorator =>
  ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Same key and body within 24 h replays the first answer.' });

/** What a route binds its key to and how it recovers the answer of a first request that died. */
export interface IdempotentRoute<T> {
  /** What the key is bound to besides the account, read from the request as sent: its body unless the route says otherwise. */
  boundTo?: (request: Request) => unknown;
  /** Asked when the key is taken over from a request that died: its answer, if it had made one; else the work runs again. */
  recover: (key: string) => Promise<T | null>;
}

/**
 * `Idempotency-Key` on the routes that honour it (docs/design.md#idempotency-and-crash-takeover): with the header,
 * IdempotencyService decides whether the handler's work runs or the key's kept answer is sent again; without it
 * the work runs as it is. Called from the handler, so the route's pipes have run: a body they refuse keeps
 * nothing (the key then takes a body that passes), and nothing is hashed for it. Not a Nest interceptor: one
 * wraps every request of its route, with or without a key, in an RxJS chain (6–13 % of a create's CPU, docs/BENCHMARKS.md).
 */
@Injectable()
export class IdempotentAnswers {
  constructor(private readonly idempotency: IdempotencyService) {}

  async answer<T>(exchange: IdempotentExchange, accountId: string, route: IdempotentRoute<T>, work: () => Promise<T>): Promise<T> {
    const { key, request, response } = exchange;
    if (key === null) return work();
    // Nest has set the route's success status (its @HttpCode, 201 for a POST) before the handler runs.
    const status = response.statusCode;
    const boundTo = route.boundTo ? route.boundTo(request) : request.body;
    const result = await this.idempotency.run(accountId, key, boundTo, work, () => route.recover(key), status);
    // A replay is the answer this route made for the key before: the same T, as it was sent.
    return result instanceof Replay ? (replay(result, response) as T) : result;
  }
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
