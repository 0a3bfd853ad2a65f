/**
 * `npm run migration:run | migration:generate -- <Name> | migration:check`, on the same validated
 * config as the app. `run` migrates DATABASE_URL, or the embedded cluster under DATA_DIR.
 * `generate` and `check` diff the entities against a scratch database migrated to the latest
 * committed migration, so they never touch real data: `generate` writes the difference as a new
 * migration and registers it; `check` fails when there is one (entities and migrations drifted).
 */
import 'reflect-metadata';
import { mkdtemp, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { LocalPostgres, brokerDataSourceOptions, pendingSchemaChanges, runMigrations } from '@app/database';
import { loadConfigFromEnvironment } from './config';
import { ENTITIES } from './entities';

const MIGRATIONS_DIR = resolve('libs/database/src/migrations');

async function main(): Promise<number> {
  const [command, name] = process.argv.slice(2);
  const config = loadConfigFromEnvironment();
  switch (command) {
    case 'run':
      return run(config.databaseUrl, config.dataDir);
    case 'check':
      return withScratchDatabase(config.databaseUrl, async (dataSource) => {
        const { up } = await pendingSchemaChanges(dataSource);
        if (up.length === 0) {
          console.log('entities and migrations agree');
          return 0;
        }
        console.error(`entities and migrations drifted; run \`npm run migration:generate -- <Name>\`. Missing SQL:\n${up.join(';\n')};`);
        return 1;
      });
    case 'generate':
      if (!name || !/^[A-Z][A-Za-z0-9]*$/.test(name)) {
        console.error('usage: npm run migration:generate -- <PascalCaseName>');
        return 2;
      }
      return withScratchDatabase(config.databaseUrl, async (dataSource) => {
        const { up, down } = await pendingSchemaChanges(dataSource);
        if (up.length === 0) {
          console.log('no changes: entities and migrations agree');
          return 0;
        }
        console.log(`wrote ${await writeMigration(name, up, down)}`);
        return 0;
      });
    default:
      console.error('usage: migration-cli run | generate <Name> | check');
      return 2;
  }
}

async function run(databaseUrl: string | undefined, dataDir: string): Promise<number> {
  const postgres = databaseUrl ? undefined : await LocalPostgres.start({ dataDir, database: 'broker' });
  const dataSource = new DataSource(brokerDataSourceOptions({ url: databaseUrl ?? postgres!.url, entities: ENTITIES, poolSize: 2 }));
  try {
    await dataSource.initialize();
    const applied = await runMigrations(dataSource);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'nothing to apply: the database is up to date');
    return 0;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await postgres?.stop();
  }
}

/** A throwaway database on DATABASE_URL's server, or on a throwaway local server. */
async function withScratchDatabase(databaseUrl: string | undefined, work: (dataSource: DataSource) => Promise<number>): Promise<number> {
  let postgres: LocalPostgres | undefined;
  let adminUrl = databaseUrl;
  if (!adminUrl) {
    const dir = await mkdtemp(join(tmpdir(), 'session-broker-migrations-'));
    await chmod(dir, 0o755);
    postgres = await LocalPostgres.start({ dataDir: dir, ephemeral: true });
    adminUrl = postgres.adminUrl;
  }
  const scratch = `migration_scratch_${process.pid}`;
  const admin = new DataSource({ type: 'postgres', url: adminUrl });
  await admin.initialize();
  await admin.query(`DROP DATABASE IF EXISTS ${scratch}`);
  await admin.query(`CREATE DATABASE ${scratch}`);
  const url = new URL(adminUrl);
  url.pathname = `/${scratch}`;
  const dataSource = new DataSource(brokerDataSourceOptions({ url: url.toString(), entities: ENTITIES, poolSize: 2 }));
  try {
    await dataSource.initialize();
    await runMigrations(dataSource);
    return await work(dataSource);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await admin.query(`DROP DATABASE IF EXISTS ${scratch}`);
    await admin.destroy();
    if (postgres) {
      await postgres.stop();
      await rm(resolve(postgres.clusterDir, '..'), { recursive: true, force: true });
    }
  }
}

async function writeMigration(name: string, up: string[], down: string[]): Promise<string> {
  const timestamp = Date.now();
  const className = `${name}${timestamp}`;
  const fileName = `${timestamp}-${name}`;
  const statements = (queries: string[]) => queries.map((q) => `    await queryRunner.query(${JSON.stringify(q)});`).join('\n');
  const source = `import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  public async up(queryRunner: QueryRunner): Promise<void> {
${statements(up)}
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
${statements([...down].reverse())}
  }
}
`;
  await writeFile(join(MIGRATIONS_DIR, `${fileName}.ts`), source);
  const indexPath = join(MIGRATIONS_DIR, 'index.ts');
  const index = await readFile(indexPath, 'utf8');
  const withImport = index.replace(/(\/\*\*[^]*?\*\/\n)/, `$1import { ${className} } from './${fileName}';\n`);
  const updated = withImport.replace(/export const MIGRATIONS: Function\[\] = \[([^]*?)\];/, (_all, list: string) => {
    const items = list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return `export const MIGRATIONS: Function[] = [${[...items, className].join(', ')}];`;
  });
  await writeFile(indexPath, updated);
  return join('libs/database/src/migrations', `${fileName}.ts`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`migration: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
