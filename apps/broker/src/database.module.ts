import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { PoolStatements, brokerDataSourceOptions } from '@app/database';
import { DatabaseObserver } from './database-observer';
import { ENTITIES } from './entities';
import { ListenClient } from './database/listen-client';

/** The TypeORM connection, its pool opened at start and observed, and PoolStatements on that pool. Migrations have already run (see `prepareDatabase`) when this starts. */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, pool: { size: number; idleTimeoutMs: number }): DynamicModule {
    const logger = new Logger(ListenClient.name);
    return {
      module: DatabaseModule,
      // The one LISTEN connection of this replica, shared by whoever subscribes (breaker state, webhooks).
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...brokerDataSourceOptions({ url, entities: ENTITIES, poolSize: pool.size, idleTimeoutMs: pool.idleTimeoutMs }),
          retryAttempts: 3,
          retryDelay: 1000,
        }),
      ],
      providers: [
        DatabaseObserver,
        // The create path's lone statements, straight on the pool, timed like TypeORM's.
        {
          provide: PoolStatements,
          useFactory: (dataSource: DataSource, observer: DatabaseObserver) =>
            new PoolStatements(dataSource, (statement, ms) => observer.statementTimed(statement, ms)),
          inject: [getDataSourceToken(), DatabaseObserver],
        },
        { provide: ListenClient, useFactory: () => new ListenClient(url, { onWarning: (m) => logger.warn(m) }) },
      ],
      exports: [ListenClient, PoolStatements],
    };
  }
}
