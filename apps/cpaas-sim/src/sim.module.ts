import { Module, type DynamicModule } from '@nestjs/common';
import type { SimulatorConfig } from './config/sim-config';
import { SimController } from './sim.controller';

export const SIM_CONFIG = Symbol('SIM_CONFIG');

@Module({})
export class SimModule {
  static forRoot(config: SimulatorConfig): DynamicModule {
    return { module: SimModule, controllers: [SimController], providers: [{ provide: SIM_CONFIG, useValue: config }] };
  }
}
