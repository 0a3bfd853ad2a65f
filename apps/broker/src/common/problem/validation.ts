import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { ValidationProblem, type FieldError } from './problem';

/** No request body of ours nests deeper; a deeper one would only exhaust the stack of the transformer. */
export const MAX_BODY_DEPTH = 32;

/** Flattens class-validator's tree into one entry per bad field, with its path. */
export function fieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const path = /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : parent ? `${parent}.${error.property}` : error.property;
    // Several rules may share one message (a value that is no number breaks every range rule): it is said once.
    const own = [...new Set(Object.values(error.constraints ?? {}))].map((message) => ({
      field: path,
      message: message.replace(/^property (\S+) should not exist$/, 'is not allowed'),
    }));
    return [...own, ...fieldErrors(error.children ?? [], path)];
  });
}

/** Whether a parsed JSON value nests deeper than `max`; iterative, so any depth is measured safely. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(item as Record<string, unknown>)) stack.push([child, depth + 1]);
  }
  return false;
}

/** NUL, or a UTF-16 surrogate without its partner: text PostgreSQL cannot store (22P05, 22021). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The path of the first string (value or key) in `value` that PostgreSQL could not store, or
 * undefined; iterative, like `nestsDeeperThan`.
 */
export function unstorableTextAt(value: unknown, root = ''): string | undefined {
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      if (UNSTORABLE.test(item)) return path;
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    for (const [key, child] of Object.entries(item as Record<string, unknown>)) {
      const childPath = Array.isArray(item) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      if (UNSTORABLE.test(key)) return childPath;
      stack.push([child, childPath]);
    }
  }
  return undefined;
}

/**
 * A DTO class that reads its common bodies itself: `readPlainly` answers the instance the pipe would, or undefined
 * for any body it does not read (which then goes through class-transformer and class-validator).
 */
interface PlainlyRead {
  readPlainly?: (value: unknown) => unknown;
}

/** The one validation pipe: DTOs are whitelists, unknown fields are errors, values are transformed. */
class BrokerValidationPipe extends ValidationPipe {
  /**
   * The nested-binary check's rules per DTO class, kept for the pipe's life instead of one request: the
   * decorators' metadata is fixed once the classes are loaded, and the pipe's groups never change.
   */
  private readonly nestedRules = new Map<unknown, unknown[]>();

  protected override findNestedBinaryValues(object: unknown, metadataCache: Map<unknown, unknown[]> = this.nestedRules): ValidationError[] {
    return super.findNestedBinaryValues(object, metadataCache);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if ((metadata.type === 'body' || metadata.type === 'query') && nestsDeeperThan(value, MAX_BODY_DEPTH)) {
      throw new ValidationProblem([{ field: metadata.type, message: `nests deeper than ${MAX_BODY_DEPTH} levels` }]);
    }
    // Every string of a body, query or path, JSON values and keys included, before it can reach the database.
    if (metadata.type === 'body' || metadata.type === 'query' || metadata.type === 'param') {
      const at = unstorableTextAt(value, metadata.type === 'param' ? (metadata.data ?? 'param') : '');
      if (at !== undefined)
        throw new ValidationProblem([{ field: at || metadata.type, message: 'contains a NUL character or a lone UTF-16 surrogate' }]);
    }
    if (metadata.type === 'body') {
      const read = (metadata.metatype as PlainlyRead | undefined)?.readPlainly?.(value);
      if (read !== undefined) return read;
    }
    return super.transform(value, metadata);
  }
}

export function createValidationPipe(): ValidationPipe {
  return new BrokerValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationProblem(fieldErrors(errors)),
  });
}
