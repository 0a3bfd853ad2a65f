import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { SimValidationProblem, type FieldError } from './sim-problem';

function fieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field: path,
      message: message
        .replace(/^property \S+ should not exist$/, 'is not allowed')
        .replace(/^an unknown value.*$/, 'must be a JSON object'),
    }));
    return [...own, ...fieldErrors(error.children ?? [], path)];
  });
}

/** For the `_sim` control routes: DTOs are whitelists, and a bad body is a 400 naming each field. */
export const simValidationPipe = new ValidationPipe({
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  transform: true,
  validationError: { target: false, value: false },
  exceptionFactory: (errors) => new SimValidationProblem(fieldErrors(errors)),
});
