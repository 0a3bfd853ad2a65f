/**
 * A statement PostgreSQL parses once per connection instead of once per call: node-postgres sends it
 * under its name the first time a pooled connection runs it (Parse), and afterwards only binds and
 * executes it. It runs on whatever has TypeORM's `query`: a DataSource, EntityManager or QueryRunner (the
 * pool or the caller's transaction; query subscribers see it, its `toString()` being its text), or
 * PoolStatements (straight on the pool, timed by its own hook); errors arrive as QueryFailedError either way.
 *
 * PostgreSQL plans a prepared statement with its parameters' values for the first five executions, then
 * keeps a generic plan when that is not costlier on average (`plan_cache_mode`): a named statement must
 * be one whose generic plan is as good as its custom ones, measured (docs/BENCHMARKS.md).
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** Whatever runs one statement through TypeORM: a DataSource, an EntityManager or a QueryRunner. */
export interface StatementRunner {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

export function preparedStatement(name: string, text: string): PreparedStatement {
  return Object.freeze({ name, text, toString: () => text });
}

/**
 * Runs `statement` with `params`. TypeORM hands its `query` argument to node-postgres unchanged, and
 * node-postgres takes a `{ name, text }` object in place of a string: that is what is passed.
 */
export function runPrepared<T>(runner: StatementRunner, statement: PreparedStatement, params: unknown[]): Promise<T> {
  return runner.query(statement as unknown as string, params) as Promise<T>;
}
