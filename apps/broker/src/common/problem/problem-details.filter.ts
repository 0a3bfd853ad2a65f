import { ArgumentsHost, Catch, HttpException, HttpStatus, Logger, type ExceptionFilter } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { redactUrl } from '../../logging/redact';
import { requestIdOf } from '../../logging/request-id';
import { isDatabaseUnavailable } from './database-unavailable';
import { PROBLEM_CONTENT_TYPE, ProblemException, problemType, type ProblemDetails } from './problem';

/** body-parser's error kinds, which reach us as plain errors with a `type` and a `status`. */
const BODY_ERRORS: Record<string, { status: number; title: string; detail: string }> = {
  'entity.parse.failed': { status: 400, title: 'Malformed JSON', detail: 'The request body is not valid JSON.' },
  'entity.too.large': { status: 413, title: 'Request body too large', detail: 'The request body is larger than this server accepts.' },
  'encoding.unsupported': { status: 415, title: 'Unsupported encoding', detail: 'The request body encoding is not supported.' },
  'charset.unsupported': { status: 415, title: 'Unsupported charset', detail: 'The request body charset is not supported.' },
  'request.aborted': { status: 400, title: 'Request aborted', detail: 'The client aborted the request body.' },
  'request.size.invalid': { status: 400, title: 'Request size mismatch', detail: 'The request body does not match its Content-Length.' },
};

/**
 * Writes every error as application/problem+json (RFC 9457). A 5xx that we did not mean to send
 * gets an error id, logged with the error and carried in the response, so a user's report can be
 * matched to the log line; the line names the request (`reqId`, its `x-request-id`) too.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetails');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    const problem = this.toProblem(exception, request);
    if (response.headersSent) {
      response.end();
      return;
    }
    if (problem.status === 503 && !response.hasHeader('Retry-After')) response.setHeader('Retry-After', '5');
    if (problem.status === 401) response.setHeader('WWW-Authenticate', 'Bearer');
    // A body we refused without reading is not drained: the connection ends with this answer.
    if (!request.complete) response.setHeader('Connection', 'close');
    response.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  }

  private toProblem(exception: unknown, request: Request): ProblemDetails {
    if (exception instanceof ProblemException) return exception.toProblem();
    const bodyError = bodyParserError(exception);
    if (bodyError) return { type: problemType(bodyError.slug), title: bodyError.title, status: bodyError.status, detail: bodyError.detail };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) return { type: 'about:blank', title: statusTitle(status), status, detail: httpDetail(exception, request) };
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn(
        { reqId: requestIdOf(request), err: exception, method: request.method, url: redactUrl(request.originalUrl) },
        'database unavailable',
      );
      return {
        type: problemType('database-unavailable'),
        title: 'Database unavailable',
        status: 503,
        detail: 'The broker cannot reach its database right now. Retry shortly, with the same Idempotency-Key.',
      };
    }
    const errorId = randomUUID();
    this.logger.error(
      { reqId: requestIdOf(request), err: exception, errorId, method: request.method, url: redactUrl(request.originalUrl) },
      `unhandled error ${errorId}`,
    );
    const status = exception instanceof HttpException ? exception.getStatus() : HttpStatus.INTERNAL_SERVER_ERROR;
    return {
      type: 'about:blank',
      title: statusTitle(status),
      status,
      detail: `The server failed to handle this request. Quote error id ${errorId} when reporting it.`,
      errorId,
    };
  }
}

function bodyParserError(exception: unknown): { status: number; title: string; detail: string; slug: string } | undefined {
  // Nest may wrap body-parser errors in an HttpException; look at the cause as well.
  const candidates = [exception, (exception as { cause?: unknown })?.cause];
  for (const candidate of candidates) {
    const type = (candidate as { type?: unknown })?.type;
    if (typeof type === 'string' && type in BODY_ERRORS) return { ...BODY_ERRORS[type], slug: type.replace(/\./g, '-') };
  }
  return undefined;
}

function httpDetail(exception: HttpException, request: Request): string {
  if (exception.getStatus() === 404 && /^Cannot (GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /.test(exception.message)) {
    return `No route ${request.method} ${request.path}.`;
  }
  const body = exception.getResponse();
  if (typeof body === 'object' && body !== null && 'message' in body) {
    const message = (body as { message: unknown }).message;
    return Array.isArray(message) ? message.join('; ') : String(message);
  }
  return exception.message;
}

function statusTitle(status: number): string {
  const name = HttpStatus[status];
  if (!name) return 'Error';
  return name
    .toLowerCase()
    .split('_')
    .map((word, i) => (i === 0 ? word[0].toUpperCase() + word.slice(1) : word))
    .join(' ')
    .replace(/^Uri /, 'URI ');
}
