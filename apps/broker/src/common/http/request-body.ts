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
 *
 * Fastify reads no body itself (`leaveBodiesUnread`): the guards parse the raw Node request with
 * body-parser, then hand Fastify's request the parsed `body` and the exact bytes as `rawBody`.
 */
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants.js';
import { json, urlencoded } from 'body-parser';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import typeis from 'type-is';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { ProblemException } from '../problem';

/** Provider webhooks are a few hundred bytes; an unauthenticated sender gets no more than this. */
export const UNAUTHENTICATED_BODY_LIMIT_BYTES = 64 * 1024;

const ACCEPTED_TYPES = ['application/json', 'application/*+json', 'application/x-www-form-urlencoded'];
const JSON_TYPES = ACCEPTED_TYPES.slice(0, 2);

/** Marks a guard class that reads the body itself once it has authenticated the caller (`RequestBodyReader.read`). */
export const READS_BODY_AFTER_AUTHENTICATION = Symbol('reads the body after authentication');

/** Fastify's request, with the exact bytes of its body once a guard has read it. */
export type BodyRequest = FastifyRequest & { rawBody?: Buffer };
type RawRequest = IncomingMessage & { body?: unknown; rawBody?: Buffer };
type Parser = (req: RawRequest, res: ServerResponse, next: (error?: unknown) => void) => void;

/** A Content-Type Fastify would refuse (415) before any guard, kept aside until its route's guards run. */
const SET_ASIDE_TYPE = Symbol('content type set aside');
type TypedRequest = IncomingMessage & { [SET_ASIDE_TYPE]?: string };

/**
 * Makes Fastify leave every body unread, whatever its type, for the guards: its own parsers would
 * read the body before authentication, and it answers a Content-Type it cannot parse (";;;") with
 * 415 before a 401. Such a type is set aside while Fastify routes the request and put back before
 * the guards, which refuse it as they refuse any type but JSON and form (415).
 */
export function leaveBodiesUnread(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  fastify.addHook('onRequest', (request, _reply, done) => {
    const raw: TypedRequest = request.raw;
    const type = raw.headers['content-type'];
    if (type !== undefined && !typeis.is(type, ACCEPTED_TYPES)) {
      raw[SET_ASIDE_TYPE] = type;
      delete raw.headers['content-type'];
    }
    done();
  });
  fastify.addHook('preValidation', (request, _reply, done) => {
    const raw: TypedRequest = request.raw;
    if (raw[SET_ASIDE_TYPE] !== undefined) raw.headers['content-type'] = raw[SET_ASIDE_TYPE];
    done();
  });
}

/** Reads and parses a request's body (JSON or form), keeping the raw bytes as `rawBody`; a body's problems are 4xx. */
export class RequestBodyReader {
  private readonly limits: Record<'authenticated' | 'unauthenticated', number>;
  private readonly parsers: Record<'authenticated' | 'unauthenticated', Parser[]>;

  constructor(config: Pick<BrokerConfig, 'requestBodyLimitBytes'>) {
    this.limits = {
      authenticated: config.requestBodyLimitBytes,
      unauthenticated: Math.min(config.requestBodyLimitBytes, UNAUTHENTICATED_BODY_LIMIT_BYTES),
    };
    this.parsers = { authenticated: parsers(this.limits.authenticated), unauthenticated: parsers(this.limits.unauthenticated) };
  }

  async read(request: BodyRequest, reply: FastifyReply, authenticated: boolean): Promise<void> {
    const raw: RawRequest = request.raw;
    if (!hasBody(raw)) return;
    if (!typeis(raw, ACCEPTED_TYPES)) {
      throw new ProblemException({
        status: 415,
        slug: 'unsupported-media-type',
        title: 'Unsupported media type',
        detail: `Send the body as application/json (got ${request.headers['content-type'] ? `"${request.headers['content-type']}"` : 'no Content-Type'}).`,
      });
    }
    const caller = authenticated ? 'authenticated' : 'unauthenticated';
    // body-parser would read an announced oversize body to its end before answering.
    if (Number(raw.headers['content-length'] ?? 0) > this.limits[caller]) throw tooLarge(this.limits[caller]);
    for (const parse of this.parsers[caller]) {
      await new Promise<void>((resolve, reject) => {
        parse(raw, reply.raw, (error?: unknown) => (error ? reject(clientError(error)) : resolve()));
      });
    }
    request.body = raw.body;
    request.rawBody = raw.rawBody;
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
    await this.reader.read(http.getRequest<BodyRequest>(), http.getResponse<FastifyReply>(), false);
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

function parsers(limit: number): Parser[] {
  // Provider webhooks are verified over the exact bytes received.
  const verify = (req: RawRequest, _res: unknown, buffer: Buffer) => {
    req.rawBody = buffer;
  };
  return [json({ limit, type: JSON_TYPES, verify }), urlencoded({ limit, extended: false, verify })] as Parser[];
}

/** RFC 9112: a body is announced by Transfer-Encoding or a non-zero Content-Length. */
function hasBody(request: IncomingMessage): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}
