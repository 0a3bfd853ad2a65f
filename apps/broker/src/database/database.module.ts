import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { ENTITIES } from './entities';

/** The TypeORM connection. Migrations have already run (see `prepareDatabase`) when this starts. */
@Module({})
export class DatabaseModule {
  static forRoot(url: string): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [TypeOrmModule.forRoot({ ...brokerDataSourceOptions({ url, entities: ENTITIES }), retryAttempts: 3, retryDelay: 1000 })],
    };
  }
}
