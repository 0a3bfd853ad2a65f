export { readCliEnvironment, type CliEnvironment } from './cli-environment';
