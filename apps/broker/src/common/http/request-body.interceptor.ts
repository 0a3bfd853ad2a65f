/**
 * Request bodies are read here, after the route's guards, instead of by a body parser in front of
 * every route: a request that fails authentication is answered from its headers alone, so nothing
 * an unauthenticated client sends is buffered. Routes without a guard (provider webhooks, which
 * verify a signature over the raw bytes) read at most UNAUTHENTICATED_BODY_LIMIT_BYTES.
 */
import { Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { json, urlencoded, type Request, type RequestHandler, type Response } from 'express';
import type { Observable } from 'rxjs';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { ProblemException } from '../problem';

/** Provider webhooks are a few hundred bytes; an unauthenticated sender gets no more than this. */
export const UNAUTHENTICATED_BODY_LIMIT_BYTES = 64 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];
const FORM_TYPE = 'application/x-www-form-urlencoded';

const AUTHENTICATED = Symbol('authenticated');
type BodyRequest = Request & { rawBody?: Buffer; [AUTHENTICATED]?: true };

/** Guards call this once they have accepted the caller: its body may then be as large as REQUEST_BODY_LIMIT_BYTES. */
export function markAuthenticated(request: Request): void {
  (request as BodyRequest)[AUTHENTICATED] = true;
}

@Injectable()
export class RequestBodyInterceptor implements NestInterceptor {
  private readonly limits: Record<'authenticated' | 'unauthenticated', number>;
  private readonly parsers: Record<'authenticated' | 'unauthenticated', RequestHandler[]>;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    this.limits = {
      authenticated: config.requestBodyLimitBytes,
      unauthenticated: Math.min(config.requestBodyLimitBytes, UNAUTHENTICATED_BODY_LIMIT_BYTES),
    };
    this.parsers = { authenticated: parsers(this.limits.authenticated), unauthenticated: parsers(this.limits.unauthenticated) };
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<BodyRequest>();
    const response = context.switchToHttp().getResponse<Response>();
    if (hasBody(request)) {
      if (!request.is([...JSON_TYPES, FORM_TYPE])) {
        throw new ProblemException({
          status: 415,
          slug: 'unsupported-media-type',
          title: 'Unsupported media type',
          detail: `Send the body as application/json (got ${request.headers['content-type'] ? `"${request.headers['content-type']}"` : 'no Content-Type'}).`,
        });
      }
      const limit = request[AUTHENTICATED] ? this.limits.authenticated : this.limits.unauthenticated;
      // body-parser would read an announced oversize body to its end before answering.
      if (Number(request.headers['content-length'] ?? 0) > limit) throw tooLarge(limit);
      for (const parse of this.parsers[request[AUTHENTICATED] ? 'authenticated' : 'unauthenticated']) {
        await new Promise<void>((resolve, reject) => {
          void parse(request, response, (error?: unknown) => (error ? reject(clientError(error)) : resolve()));
        });
      }
    }
    return next.handle();
  }
}

/**
 * body-parser's own errors carry a `type` the problem filter knows; a stream error it passed on
 * (say, a body that does not decompress) carries only a 4xx status, which is still the client's fault.
 */
function clientError(error: unknown): unknown {
  const { type, status } = error as { type?: unknown; status?: unknown };
  if (typeof type === 'string' || typeof status !== 'number' || status < 400 || status > 499) return error;
  return new ProblemException({
    status,
    slug: 'unreadable-body',
    title: 'Unreadable body',
    detail: 'The request body could not be read as sent (check Content-Encoding).',
  });
}

function tooLarge(limit: number): ProblemException {
  return new ProblemException({
    status: 413,
    slug: 'entity-too-large',
    title: 'Request body too large',
    detail: `The request body is larger than this route accepts (${limit} bytes).`,
  });
}

function parsers(limit: number): RequestHandler[] {
  // Provider webhooks are verified over the exact bytes received.
  const verify = (req: BodyRequest, _res: unknown, buffer: Buffer) => {
    req.rawBody = buffer;
  };
  return [json({ limit, type: JSON_TYPES, verify }), urlencoded({ limit, extended: false, verify })];
}

/** RFC 9112: a body is announced by Transfer-Encoding or a non-zero Content-Length. */
function hasBody(request: Request): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}
