/**
 * Ids as PostgreSQL's text form of a `uuid[]`, `{id,id,...}`: what node-postgres would send for the array, without
 * quoting and escaping each element (a uuid has nothing to quote), for a statement that casts it (`$n::uuid[]`). A
 * pool's load order is every one of a provider's number ids, on every create (1.7 % of the broker's CPU per create
 * in node-postgres's `arrayString`, `bench:sessions -- --against --profile`). An element that is not a uuid still
 * fails there, as a uuid.
 */
export function uuidArrayLiteral(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}
