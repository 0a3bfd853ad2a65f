export { LocalPostgres, type LocalPostgresOptions } from './local-postgres';
export { LocalPostgresError } from './errors';
