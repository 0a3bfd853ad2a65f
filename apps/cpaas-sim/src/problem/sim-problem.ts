import { HttpException } from '@nestjs/common';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface FieldError {
  field: string;
  message: string;
}

/** RFC 9457 problem details with the simulator's `code` member, the way a provider names its errors. */
export interface SimProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
}

/** An error that knows how it is told to the client; the filter writes it as it is. */
export class SimProblem extends HttpException {
  constructor(
    status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly errors?: FieldError[],
  ) {
    super(detail, status);
  }

  toProblem(): SimProblemDetails {
    return simProblem(this.getStatus(), this.code, this.title, this.detail, this.errors);
  }
}

export function simProblem(status: number, code: string, title: string, detail: string, errors?: FieldError[]): SimProblemDetails {
  return { type: `/problems/${code}`, title, status, detail, code, ...(errors ? { errors } : {}) };
}

export class SimValidationProblem extends SimProblem {
  constructor(errors: FieldError[], code = 'bad-request') {
    super(400, code, 'Invalid request', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
  }
}
