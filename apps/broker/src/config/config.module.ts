import { Global, Module, type DynamicModule } from '@nestjs/common';
import { BROKER_CONFIG, type BrokerConfig } from './broker-config';

/** Makes the one validated config object injectable as BROKER_CONFIG. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: BrokerConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: BROKER_CONFIG, useValue: config }], exports: [BROKER_CONFIG] };
  }
}
