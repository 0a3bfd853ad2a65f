import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { ValidationProblem, type FieldError } from './problem';

/** Flattens class-validator's tree into one entry per bad field, with its path. */
export function fieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const path = /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field: path,
      message: message.replace(/^property (\S+) should not exist$/, 'is not allowed'),
    }));
    return [...own, ...fieldErrors(error.children ?? [], path)];
  });
}

/** The one validation pipe: DTOs are whitelists, unknown fields are errors, values are transformed. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationProblem(fieldErrors(errors)),
  });
}
