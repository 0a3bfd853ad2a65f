export { brokerDataSourceOptions, type BrokerDataSourceInput } from './data-source-options';
export { LocalPostgres, LocalPostgresError, type LocalPostgresOptions } from './local-postgres';
export { pendingSchemaChanges, runMigrations } from './migration-runner';
export { MIGRATIONS } from './migrations';
export { uuidArrayLiteral } from './uuid-array';
export { preparedStatement, runPrepared, type PreparedStatement, type StatementRunner } from './prepared-statement';
export { PoolStatements, driverPool, type StatementTimed } from './pool-statements';
