import { HttpException } from '@nestjs/common';

/** RFC 9457 problem details, as every error response of the broker is written. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

export interface FieldError {
  /** Path of the bad field in the request, e.g. `participants[1].number`. */
  field: string;
  message: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Our problem types are relative URIs naming the kind of problem (RFC 9457 §3.1.1). */
export const problemType = (slug: string): string => `/problems/${slug}`;

/**
 * An error that already knows how it should be told to the client. Services throw it (or a
 * subclass) and the global filter writes it as it is.
 */
export class ProblemException extends HttpException {
  constructor(
    status: number,
    readonly title: string,
    readonly detail: string,
    readonly slug: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(detail, status);
  }

  toProblem(): ProblemDetails {
    return { type: problemType(this.slug), title: this.title, status: this.getStatus(), detail: this.detail, ...this.extensions };
  }
}

export class ValidationProblem extends ProblemException {
  constructor(readonly errors: FieldError[]) {
    super(400, 'Invalid request', errors.map((e) => `${e.field}: ${e.message}`).join('; '), 'validation-error', { errors });
  }
}
