import type { DataSource, EntityMetadata, QueryRunner } from 'typeorm';

type IndexMetadata = EntityMetadata['indices'][number];

/** Fixed key of the advisory lock that lets one replica at a time run migrations. */
const MIGRATION_LOCK_KEY = 7_240_001;

/**
 * Runs pending migrations, all in one transaction, under an advisory lock so replicas starting
 * together neither race nor fail: the second waits, then finds nothing left to run.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await dataSource.runMigrations({ transaction: 'all' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}

/**
 * The SQL that would bring the database in line with the entities: empty when the committed
 * migrations match them. This is what `migration:generate --check` computes, and what TypeORM's diff
 * does not see: an index whose name is there but whose condition (`WHERE`) or column order differs
 * (a pool rule's partial index that lost `WHERE "active"` would hold one participant per number forever).
 */
export async function pendingSchemaChanges(dataSource: DataSource): Promise<{ up: string[]; down: string[] }> {
  const log = await dataSource.driver.createSchemaBuilder().log();
  const indexes = await changedIndexes(dataSource);
  return {
    up: [...log.upQueries.map((q) => q.query), ...indexes.up],
    down: [...log.downQueries.map((q) => q.query), ...indexes.down],
  };
}

/** How PostgreSQL itself prints an index: whether unique, each key column, and the condition (null: none). */
interface IndexShape {
  unique: boolean;
  columns: string[];
  predicate: string | null;
  definition: string;
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Each entity index that exists under its name but differs from the entity's declaration. The entity's
 * side is printed by PostgreSQL too: the index is created on an empty temporary copy of its table, so both
 * conditions come out of `pg_get_expr` in one canonical form (`"active"` and `(active)` are one condition,
 * `"status" = 'pending'` and `(status = 'pending'::text)` on a text column too). Nothing is changed: the transaction is rolled back.
 */
async function changedIndexes(dataSource: DataSource): Promise<{ up: string[]; down: string[] }> {
  const up: string[] = [];
  const down: string[] = [];
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    let probes = 0;
    for (const entity of dataSource.entityMetadatas) {
      if (entity.tableType !== 'regular' && entity.tableType !== 'entity-child') continue;
      const schema = entity.schema ?? 'public';
      let copy: string | undefined;
      for (const index of entity.indices) {
        if (index.synchronize === false || !index.name || index.isSpatial || index.isFulltext) continue;
        const actual = await indexShape(runner, schema, index.name);
        // An index that is not there at all is in TypeORM's own diff.
        if (!actual) continue;
        if (!copy) {
          copy = `schema_check_${probes}`;
          await runner.query(`CREATE TEMPORARY TABLE ${quote(copy)} (LIKE ${quote(schema)}.${quote(entity.tableName)}) ON COMMIT DROP`);
        }
        const probe = `schema_check_index_${probes++}`;
        await runner.query(createIndexSql(index, probe, `pg_temp.${quote(copy)}`));
        const declared = (await indexShape(runner, 'pg_temp', probe))!;
        if (declared.unique === actual.unique && sameList(declared.columns, actual.columns) && declared.predicate === actual.predicate)
          continue;
        up.push(`DROP INDEX ${quote(schema)}.${quote(index.name)}`, createIndexSql(index, index.name, quote(entity.tableName)));
        down.push(actual.definition, `DROP INDEX ${quote(schema)}.${quote(index.name)}`);
      }
    }
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction();
    await runner.release();
  }
  return { up, down };
}

function createIndexSql(index: IndexMetadata, name: string, table: string): string {
  const columns = index.columns.map((column) => quote(column.databaseName)).join(', ');
  return `CREATE ${index.isUnique ? 'UNIQUE ' : ''}INDEX ${quote(name)} ON ${table} (${columns})${index.where ? ` WHERE ${index.where}` : ''}`;
}

async function indexShape(runner: QueryRunner, schema: string, name: string): Promise<IndexShape | undefined> {
  const rows = (await runner.query(
    `SELECT i.indisunique AS unique,
            ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnkeyatts) AS k ORDER BY k) AS columns,
            pg_get_expr(i.indpred, i.indrelid, true) AS predicate,
            pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = $1 AND (n.nspname = $2 OR ($2 = 'pg_temp' AND n.oid = pg_my_temp_schema()))`,
    [name, schema],
  )) as IndexShape[];
  return rows[0];
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
