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

/** What a ProblemException tells the client, by name. */
export interface ProblemOptions {
  status: number;
  /** The kind of problem: the response's `type` is `/problems/<slug>`. */
  slug: string;
  /** The same for every occurrence of this kind. */
  title: string;
  /** This occurrence, in words the client can act on. */
  detail: string;
  /** Members written beside the standard ones (RFC 9457 §3.2), e.g. `errors`, `provider`. */
  extensions?: Record<string, unknown>;
}

/**
 * An error that already knows how it should be told to the client. Services throw it (or a
 * subclass) and the global filter writes it as it is.
 */
export class ProblemException extends HttpException {
  readonly title: string;
  readonly detail: string;
  readonly slug: string;
  readonly extensions: Record<string, unknown>;

  constructor(options: ProblemOptions) {
    super(options.detail, options.status);
    this.title = options.title;
    this.detail = options.detail;
    this.slug = options.slug;
    this.extensions = options.extensions ?? {};
  }

  toProblem(): ProblemDetails {
    return { type: problemType(this.slug), title: this.title, status: this.getStatus(), detail: this.detail, ...this.extensions };
  }
}

/** A provider name the broker does not have: admin routes, inbound webhooks, the CPaaS history. */
export function unknownProvider(name: string): ProblemException {
  return new ProblemException({ status: 404, slug: 'unknown-provider', title: 'Unknown provider', detail: `No provider named "${name}".` });
}

export class ValidationProblem extends ProblemException {
  constructor(readonly errors: FieldError[]) {
    super({
      status: 400,
      slug: 'validation-error',
      title: 'Invalid request',
      detail: errors.map((e) => `${e.field}: ${e.message}`).join('; '),
      extensions: { errors },
    });
  }
}
