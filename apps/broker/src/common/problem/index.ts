export { PROBLEM_CONTENT_TYPE, ProblemException, ValidationProblem, problemType, type FieldError, type ProblemDetails } from './problem';
export { ProblemDetailsFilter } from './problem-details.filter';
export { createValidationPipe, fieldErrors } from './validation';
