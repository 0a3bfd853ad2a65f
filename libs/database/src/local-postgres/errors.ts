/** A local PostgreSQL that cannot start, said in one line a user can act on. */
export class LocalPostgresError extends Error {
  override name = 'LocalPostgresError';
}
