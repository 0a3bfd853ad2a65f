/**
 * One statement on a connection of TypeORM's own pool, sent straight through node-postgres: for the statements a
 * create sends alone, outside any transaction (a reservation, a create, an activation, the delivery wake after
 * it). `DataSource.query` does the same through a query runner made and released per statement, with a
 * subscriber broadcast before and after it and a result object around it: a few microseconds of CPU a statement,
 * too little for a create to show (docs/BENCHMARKS.md). What matters more is the connection a server ended, below.
 * What `DataSource.query` gives its callers is kept:
 *
 * - the answer is TypeORM's: the rows, or `[rows, rowCount]` for an UPDATE or a DELETE;
 * - a failed statement rejects with TypeORM's QueryFailedError around node-postgres's error (its `code` and
 *   `constraint` copied onto it, `driverError` the original), so a unique violation or a deadlock reads the same;
 * - a connection that fails while held (its server went away) is released with that error, so the pool drops it
 *   rather than hand it to the next statement; one whose statement merely failed goes back to the pool. Here it
 *   is also dropped when the failure itself says the connection is over (`endsConnection`): a backend ended by
 *   its server answers its statement with a FATAL error before its socket closes, and TypeORM, which releases on
 *   the socket's `error` event only, hands that connection to the next statement (which then fails: "Connection
 *   terminated unexpectedly", measured in this file's spec);
 * - the connection is taken and its error awaited as TypeORM does: a pool that cannot connect rejects with
 *   node-postgres's error, not a QueryFailedError;
 * - each statement's time (from the connection taken to the answer read) goes to `timed`, as TypeORM's after-query
 *   event tells its subscribers (the broker's statement-duration metric).
 */
import { performance } from 'node:perf_hooks';
import type { Pool, QueryResult } from 'pg';
import { QueryFailedError, type DataSource } from 'typeorm';
import type { PreparedStatement, StatementRunner } from './prepared-statement';

/** Told each statement that answered, with its time in milliseconds. */
export type StatementTimed = (statement: string | PreparedStatement, ms: number) => void;

export class PoolStatements implements StatementRunner {
  constructor(
    private readonly dataSource: DataSource,
    private readonly timed: StatementTimed = () => {},
  ) {}

  async query(statement: string | PreparedStatement, params?: unknown[]): Promise<unknown> {
    // Read each time: the pool is the DataSource's once it is initialised, and a new one should it be again.
    const client = await driverPool(this.dataSource).connect();
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      const started = performance.now();
      // node-postgres takes a `{ name, text }` object in place of the text: a statement parsed once per connection.
      const result: QueryResult = await client.query(statement as string, params);
      this.timed(statement, performance.now() - started);
      return result.command === 'UPDATE' || result.command === 'DELETE' ? [result.rows, result.rowCount] : result.rows;
    } catch (error) {
      if (endsConnection(error)) broken ??= error as Error;
      throw new QueryFailedError(String(statement), params, error as Error);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }
}

/**
 * Whether a statement's failure leaves its connection unusable: an error without an SQLSTATE (node-postgres's own,
 * the socket closed or timed out), one PostgreSQL sends as FATAL or PANIC (the backend exits after it), or one of
 * class 08 (connection exception). A statement's own error (a constraint, a deadlock, a cancel) is an ERROR.
 */
export function endsConnection(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown };
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return severity === 'FATAL' || severity === 'PANIC' || code.startsWith('08');
}

/** The node-postgres pool of a DataSource on PostgreSQL (TypeORM's PostgresDriver keeps it as `master`). */
export function driverPool(dataSource: DataSource): Pool {
  const pool = (dataSource.driver as unknown as { master?: Pool }).master;
  if (!pool) throw new TypeError('the DataSource has no node-postgres pool: is it initialised, on PostgreSQL?');
  return pool;
}
