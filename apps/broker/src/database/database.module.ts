import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { DatabaseObserver } from './database-observer';
import { ENTITIES } from './entities';

/** The TypeORM connection, its pool opened at start and observed. Migrations have already run (see `prepareDatabase`) when this starts. */
@Module({})
export class DatabaseModule {
  static forRoot(url: string, pool: { size: number; idleTimeoutMs: number }): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...brokerDataSourceOptions({ url, entities: ENTITIES, poolSize: pool.size, idleTimeoutMs: pool.idleTimeoutMs }),
          retryAttempts: 3,
          retryDelay: 1000,
        }),
      ],
      providers: [DatabaseObserver],
    };
  }
}
