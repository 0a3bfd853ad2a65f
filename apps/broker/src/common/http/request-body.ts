/**
 * Request bodies are read after authentication, instead of by a body parser in front of every
 * route: a request that fails authentication is answered from its headers alone, so nothing an
 * unauthenticated client sends is buffered. A guard that authenticates (ApiKeyGuard,
 * AdminTokenGuard) reads the body itself once it has accepted the caller, up to
 * REQUEST_BODY_LIMIT_BYTES; `RequestBodyGuard`, global, reads the body of every other route (provider
 * webhooks, which verify a signature over the raw bytes) up to UNAUTHENTICATED_BODY_LIMIT_BYTES.
 *
 * Guards, not an interceptor: any global interceptor puts every request of the app through Nest's
 * RxJS interceptor chain, about 8 % of the broker's CPU per session create (docs/BENCHMARKS.md).
 */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants.js';
import { json, urlencoded, type Request, type RequestHandler, type Response } from 'express';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { ProblemException } from '../problem';

/** Provider webhooks are a few hundred bytes; an unauthenticated sender gets no more than this. */
export const UNAUTHENTICATED_BODY_LIMIT_BYTES = 64 * 1024;

const FORM_TYPE = 'application/x-www-form-urlencoded';
const JSON_TYPES = ['application/json', 'application/*+json'];
const ACCEPTED_TYPES = [...JSON_TYPES, FORM_TYPE];

/** Marks a guard class that reads the body itself once it has authenticated the caller (`RequestBodyReader.read`). */
export const READS_BODY_AFTER_AUTHENTICATION = Symbol('reads the body after authentication');

type BodyRequest = Request & { rawBody?: Buffer };

/** Reads and parses a request's body (JSON or form), keeping the raw bytes as `rawBody`; a body's problems are 4xx. */
export class RequestBodyReader {
  private readonly limits: Record<'authenticated' | 'unauthenticated', number>;
  private readonly parsers: Record<'authenticated' | 'unauthenticated', Record<'json' | 'form', RequestHandler>>;

  constructor(config: Pick<BrokerConfig, 'requestBodyLimitBytes'>) {
    this.limits = {
      authenticated: config.requestBodyLimitBytes,
      unauthenticated: Math.min(config.requestBodyLimitBytes, UNAUTHENTICATED_BODY_LIMIT_BYTES),
    };
    this.parsers = { authenticated: parsers(this.limits.authenticated), unauthenticated: parsers(this.limits.unauthenticated) };
  }

  async read(request: BodyRequest, response: Response, authenticated: boolean): Promise<void> {
    if (!hasBody(request)) return;
    // The accepted type that matched: the form's own name, or a JSON one.
    const type = request.is(ACCEPTED_TYPES);
    if (!type) {
      throw new ProblemException({
        status: 415,
        slug: 'unsupported-media-type',
        title: 'Unsupported media type',
        detail: `Send the body as application/json (got ${request.headers['content-type'] ? `"${request.headers['content-type']}"` : 'no Content-Type'}).`,
      });
    }
    const caller = authenticated ? 'authenticated' : 'unauthenticated';
    // body-parser would read an announced oversize body to its end before answering.
    if (Number(request.headers['content-length'] ?? 0) > this.limits[caller]) throw tooLarge(this.limits[caller]);
    const parse = this.parsers[caller][type === FORM_TYPE ? 'form' : 'json'];
    await new Promise<void>((resolve, reject) => {
      void parse(request, response, (error?: unknown) => (error ? reject(clientError(error)) : resolve()));
    });
  }
}

/**
 * Global: reads the body of a route that no authenticating guard protects. Global guards run before a
 * route's own, so a route with an authenticating guard is left to that guard, which reads after it
 * has accepted the caller.
 */
@Injectable()
export class RequestBodyGuard implements CanActivate {
  private readonly reader: RequestBodyReader;
  /** Per route handler: whether one of its guards reads the body itself. */
  private readonly authenticated = new WeakMap<object, boolean>();

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    this.reader = new RequestBodyReader(config);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    if (this.guardReadsBody(context)) return true;
    const http = context.switchToHttp();
    await this.reader.read(http.getRequest<BodyRequest>(), http.getResponse<Response>(), false);
    return true;
  }

  private guardReadsBody(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let known = this.authenticated.get(handler);
    if (known === undefined) {
      const guards = [context.getClass(), handler].flatMap((target) => (Reflect.getMetadata(GUARDS_METADATA, target) ?? []) as unknown[]);
      known = guards.some((guard) => typeof guard === 'function' && READS_BODY_AFTER_AUTHENTICATION in guard);
      this.authenticated.set(handler, known);
    }
    return known;
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

/** Each accepted type's parser: only the one for the body's type is run. */
function parsers(limit: number): Record<'json' | 'form', RequestHandler> {
  // Provider webhooks are verified over the exact bytes received.
  const verify = (req: BodyRequest, _res: unknown, buffer: Buffer) => {
    req.rawBody = buffer;
  };
  return { json: json({ limit, type: JSON_TYPES, verify }), form: urlencoded({ limit, extended: false, verify }) };
}

/** RFC 9112: a body is announced by Transfer-Encoding or a non-zero Content-Length. */
function hasBody(request: Request): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}
