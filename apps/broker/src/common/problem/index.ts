export {
  PROBLEM_CONTENT_TYPE,
  ProblemException,
  ValidationProblem,
  problemType,
  unknownProvider,
  type FieldError,
  type ProblemDetails,
  type ProblemOptions,
} from './problem';
export { ProblemDetailsFilter } from './problem-details.filter';
export { createValidationPipe, fieldErrors } from './validation';
