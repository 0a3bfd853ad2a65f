import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import type { Request, Response } from 'express';
import { PROBLEM_CONTENT_TYPE, SimProblem, simProblem, type SimProblemDetails } from './sim-problem';

/** Writes every simulator error as application/problem+json, as the broker does. */
@Catch()
export class SimProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('CpaasSimulator');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const problem = this.toProblem(exception, http.getRequest<Request>());
    if (response.headersSent) {
      response.end();
      return;
    }
    response.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  }

  private toProblem(exception: unknown, request: Request): SimProblemDetails {
    if (exception instanceof SimProblem) return exception.toProblem();
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      const status = exception.getStatus();
      const detail =
        status === 404 && /^Cannot [A-Z]+ /.test(exception.message) ? `No route ${request.method} ${request.path}.` : exception.message;
      return simProblem(status, status === 404 ? 'not-found' : 'bad-request', STATUS_CODES[status] ?? 'Error', detail);
    }
    this.logger.error(
      `unhandled error on ${request.method} ${request.originalUrl}: ${exception instanceof Error ? exception.stack : String(exception)}`,
    );
    return simProblem(500, 'internal-error', 'Internal Server Error', 'The simulator failed to handle this request.');
  }
}
