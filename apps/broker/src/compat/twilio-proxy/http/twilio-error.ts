/**
 * Twilio's error bodies: `{ code, message, more_info, status }`, what the `twilio` package's RestException
 * reads. Everything the compat routes throw is written so: a `TwilioApiError` as it is, the broker's own
 * problems (a rate limit, a refused destination, no provider) with the Twilio code for the same thing, and
 * anything else as a 500 with an error id that is also in the log.
 */
import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { ProblemException } from '../../../common/problem';
import { isDatabaseUnavailable } from '../../../common/problem/database-unavailable';
import { redactUrl } from '../../../logging/redact';
import { requestIdOf } from '../../../logging/request-id';

interface TwilioErrorBody {
  code: number;
  message: string;
  more_info: string;
  status: number;
}

/** An error as Twilio Proxy answers it: the HTTP status and Twilio's own code for the kind of error. */
export class TwilioApiError extends HttpException {
  constructor(
    status: number,
    readonly code: number,
    message: string,
  ) {
    super(message, status);
  }

  body(): TwilioErrorBody {
    return {
      code: this.code,
      message: this.message,
      more_info: `https://www.twilio.com/docs/errors/${this.code}`,
      status: this.getStatus(),
    };
  }
}

/** Twilio codes used here, by what they mean (Twilio's error dictionary). */
export const TWILIO_CODES = {
  authenticate: 20003,
  notFound: 20404,
  tooManyRequests: 20429,
  internal: 20500,
  unavailable: 20503,
  /** Proxy: "Parameter Validation Failed". */
  invalidParameter: 80701,
  participantAlreadyInSession: 80103,
  noAvailableProxy: 80206,
  participantIdentifierInvalid: 80404,
  nonUniqueServiceName: 80602,
  nonUniqueSessionName: 80603,
  proxyIdentifierInUse: 80604,
  proxyIdentifierNotOwned: 80606,
  tooManyParticipants: 80609,
  /** Proxy: "No Partner Participant Found". */
  noPartner: 80614,
  sessionNotActive: 80608,
  notSupported: 20001,
} as const;

export function invalidParameter(name: string, why: string): TwilioApiError {
  return new TwilioApiError(400, TWILIO_CODES.invalidParameter, `'${name}' is invalid. ${why}`);
}

export function notFound(what: string): TwilioApiError {
  return new TwilioApiError(404, TWILIO_CODES.notFound, `The requested resource ${what} was not found`);
}

/** The broker's own problem, by its kind, in Twilio's words for the same thing. */
function fromProblem(problem: ProblemException): TwilioApiError {
  const status = problem.getStatus();
  const code = PROBLEM_CODES[problem.slug] ?? codeForStatus(status);
  return new TwilioApiError(status, code, problem.detail);
}

const PROBLEM_CODES: Record<string, number> = {
  unauthorized: TWILIO_CODES.authenticate,
  'rate-limited': TWILIO_CODES.tooManyRequests,
  'validation-error': TWILIO_CODES.invalidParameter,
  'destination-not-allowed': TWILIO_CODES.participantIdentifierInvalid,
  'proxy-number-participant': TWILIO_CODES.participantIdentifierInvalid,
  'session-not-active': TWILIO_CODES.sessionNotActive,
};

function codeForStatus(status: number): number {
  if (status === 401) return TWILIO_CODES.authenticate;
  if (status === 404) return TWILIO_CODES.notFound;
  if (status === 429) return TWILIO_CODES.tooManyRequests;
  if (status === 503) return TWILIO_CODES.unavailable;
  if (status >= 500) return TWILIO_CODES.internal;
  return TWILIO_CODES.invalidParameter;
}

/** Bound to the compat controllers: their errors are Twilio's, never problem+json. */
@Catch()
export class TwilioErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('TwilioProxyCompat');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const request = host.switchToHttp().getRequest<Request>();
    const error = this.toTwilio(exception, request);
    if (response.headersSent) {
      response.end();
      return;
    }
    const status = error.getStatus();
    if (status === 401) response.setHeader('WWW-Authenticate', 'Basic realm="Twilio API"');
    if (status === 503 && !response.hasHeader('Retry-After')) response.setHeader('Retry-After', '5');
    if (!request.complete) response.setHeader('Connection', 'close');
    response.status(status).type('application/json').send(JSON.stringify(error.body()));
  }

  private toTwilio(exception: unknown, request: Request): TwilioApiError {
    if (exception instanceof TwilioApiError) return exception;
    if (exception instanceof ProblemException) return fromProblem(exception);
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      const status = exception.getStatus();
      // Nest's own 404 for a path no route has.
      if (status === 404) return notFound(request.path);
      return new TwilioApiError(status, codeForStatus(status), exception.message);
    }
    if (isDatabaseUnavailable(exception))
      return new TwilioApiError(503, TWILIO_CODES.unavailable, 'The broker cannot reach its database right now; retry shortly.');
    // Body-parser errors carry their own 4xx status and a type.
    const { status, type } = (exception ?? {}) as { status?: unknown; type?: unknown };
    if (typeof type === 'string' && typeof status === 'number' && status >= 400 && status < 500)
      return new TwilioApiError(status, codeForStatus(status), `The request body could not be read (${type}).`);
    const errorId = randomUUID();
    this.logger.error(
      { reqId: requestIdOf(request), err: exception, errorId, method: request.method, url: redactUrl(request.originalUrl) },
      `unhandled error ${errorId}`,
    );
    return new TwilioApiError(
      500,
      TWILIO_CODES.internal,
      `The server failed to handle this request. Quote error id ${errorId} when reporting it.`,
    );
  }
}
