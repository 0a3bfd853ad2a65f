import type { DataSourceOptions, MixedList, EntitySchema } from 'typeorm';
import { MIGRATIONS } from './migrations';

export interface BrokerDataSourceInput {
  url: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  /** Pool size per process. */
  poolSize?: number;
  /**
   * Milliseconds after which an idle connection is closed; 0 (the default) keeps every opened
   * connection. node-postgres' own default is 10 s, after which the next burst pays for reopening up
   * to the pool size at once (a backend fork, a SCRAM exchange and cold catalog caches each):
   * measured in docs/BENCHMARKS.md.
   */
  idleTimeoutMs?: number;
  applicationName?: string;
}

/**
 * One shape of connection options for the app, the migration CLI and the tests: never
 * `synchronize`; the schema comes only from the committed migrations.
 */
export function brokerDataSourceOptions(input: BrokerDataSourceInput): DataSourceOptions {
  return {
    type: 'postgres',
    url: input.url,
    entities: input.entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // gen_random_uuid() is built into PostgreSQL 13+: no extension to install, no superuser needed.
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    applicationName: input.applicationName ?? 'session-broker',
    extra: {
      max: input.poolSize ?? 20,
      connectionTimeoutMillis: 5000,
      // 0: never close a connection for being idle.
      idleTimeoutMillis: input.idleTimeoutMs ?? 0,
      // A dead server should fail queries, not hang them.
      keepAlive: true,
    },
  };
}
