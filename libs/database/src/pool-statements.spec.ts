/**
 * PoolStatements on a real PostgreSQL, beside TypeORM's `DataSource.query` on the same pool: the same answers, the
 * same errors, a named statement parsed once per connection, and a connection whose server ended it while held
 * dropped rather than handed to the next statement.
 */
import { Client } from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { brokerDataSourceOptions } from './data-source-options';
import { PoolStatements, driverPool, endsConnection } from './pool-statements';
import { preparedStatement, runPrepared } from './prepared-statement';

describe('PoolStatements', () => {
  let db: TestDatabase;
  /** One connection: every statement of a test runs on the same backend unless that backend is gone. */
  let dataSource: DataSource;
  let admin: Client;
  const timed: Array<{ statement: string; ms: number }> = [];
  let statements: PoolStatements;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: [], poolSize: 1 })).initialize();
    statements = new PoolStatements(dataSource, (statement, ms) => timed.push({ statement: String(statement), ms }));
    admin = new Client({ connectionString: db.url });
    await admin.connect();
    await admin.query('CREATE TABLE spec_items (id int PRIMARY KEY, name text NOT NULL)');
  });
  afterAll(async () => {
    await admin.end();
    await dataSource.destroy();
    await db.drop();
  });
  beforeEach(async () => {
    timed.length = 0;
    await admin.query('TRUNCATE spec_items');
    await admin.query(`INSERT INTO spec_items VALUES (1, 'one'), (2, 'two'), (3, 'three')`);
  });

  const backend = async (): Promise<number> =>
    ((await statements.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>)[0].pid;

  it("answers as TypeORM's query does: rows, and [rows, rowCount] for an UPDATE or a DELETE", async () => {
    const select = 'SELECT id, name FROM spec_items WHERE id >= $1 ORDER BY id';
    expect(await statements.query(select, [2])).toEqual(await dataSource.query(select, [2]));
    expect(await statements.query(select, [2])).toEqual([
      { id: 2, name: 'two' },
      { id: 3, name: 'three' },
    ]);

    const rename = `UPDATE spec_items SET name = name || '!' WHERE id <= $1 RETURNING id`;
    const ours = await statements.query(rename, [2]);
    expect(ours).toEqual([[{ id: 1 }, { id: 2 }], 2]);
    expect(await dataSource.query(rename, [2])).toEqual(ours);

    const remove = 'DELETE FROM spec_items WHERE id = $1';
    expect(await statements.query(remove, [3])).toEqual([[], 1]);
    expect(await dataSource.query(remove, [3])).toEqual([[], 0]);

    const insert = `INSERT INTO spec_items VALUES ($1, $2) RETURNING name`;
    expect(await statements.query(insert, [4, 'four'])).toEqual([{ name: 'four' }]);
    expect(await dataSource.query(insert, [5, 'five'])).toEqual([{ name: 'five' }]);
  });

  it('refuses as TypeORM does: a QueryFailedError with the driver error, and the connection kept', async () => {
    const pid = await backend();
    const insert = 'INSERT INTO spec_items VALUES ($1, $2)';
    const ours = await statements.query(insert, [1, 'again']).catch((error: unknown) => error);
    const theirs = await dataSource.query(insert, [1, 'again']).catch((error: unknown) => error);
    expect(ours).toBeInstanceOf(QueryFailedError);
    expect(theirs).toBeInstanceOf(QueryFailedError);
    for (const error of [ours, theirs] as Array<QueryFailedError & { code: string; constraint: string }>) {
      expect(error.code).toBe('23505');
      expect(error.constraint).toBe('spec_items_pkey');
      expect((error.driverError as unknown as { code: string }).code).toBe('23505');
      expect(error.parameters).toEqual([1, 'again']);
    }
    expect((ours as Error).message).toBe((theirs as Error).message);
    // A failed statement says nothing against its connection: the pool keeps it.
    expect(await backend()).toBe(pid);
  });

  it('parses a named statement once per connection and times each statement that answered', async () => {
    const named = preparedStatement('spec.named', `/* spec.named */ SELECT count(*)::int AS n FROM spec_items WHERE id <= $1`);
    for (const limit of [1, 2, 3]) expect(await runPrepared(statements, named, [limit])).toEqual([{ n: limit }]);
    expect(await statements.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'spec.named'`)).toEqual([{ n: 1 }]);
    expect(timed.filter((t) => t.statement === named.text)).toHaveLength(3);
    for (const t of timed) expect(t.ms).toBeGreaterThanOrEqual(0);

    timed.length = 0;
    await expect(statements.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
    expect(timed).toEqual([]);
  });

  it('drops a connection its server ended while a statement held it, and the next statement runs on a new one', async () => {
    const pid = await backend();
    const sleeping = statements.query('SELECT pg_sleep(30)').catch((error: unknown) => error);
    // The sleep has started on that backend before it is ended.
    for (let i = 0; i < 200; i++) {
      const rows = (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND query LIKE 'SELECT pg_sleep%'`, [pid])).rows;
      if (rows.length > 0) break;
      await new Promise((done) => setTimeout(done, 10));
    }
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    const failure = await sleeping;
    expect(failure).toBeInstanceOf(QueryFailedError);
    expect((failure as QueryFailedError & { code?: string }).code).toBe('57P01');

    const next = await backend();
    expect(next).not.toBe(pid);
    expect(driverPool(dataSource).totalCount).toBe(1);
  });

  it('tells a failure that ends its connection from one that ends only its statement', () => {
    expect(endsConnection(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(endsConnection(Object.assign(new Error('terminating connection'), { code: '57P01', severity: 'FATAL' }))).toBe(true);
    expect(endsConnection(Object.assign(new Error('connection failure'), { code: '08006', severity: 'ERROR' }))).toBe(true);
    expect(endsConnection(Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' }))).toBe(false);
    expect(endsConnection(Object.assign(new Error('deadlock detected'), { code: '40P01', severity: 'ERROR' }))).toBe(false);
    expect(endsConnection(Object.assign(new Error('canceling statement'), { code: '57014', severity: 'ERROR' }))).toBe(false);
  });
});
