import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { SimulatorConfig } from './config/sim-config';
import { SimControlController } from './control/sim-control.controller';
import { HeldRequests } from './faults/held-requests';
import { SimProblemFilter } from './problem/sim-problem.filter';
import { ProviderApiController } from './provider-api/provider-api.controller';
import { ProviderApi } from './provider-api/provider-api.service';
import { SimulatedProviders } from './providers/simulated-providers';
import { SIM_CONFIG } from './sim-config.token';
import { BrokerWebhooks } from './webhooks/broker-webhooks';
import { InboundEvents } from './webhooks/inbound-events';

export { SIM_CONFIG } from './sim-config.token';

@Module({})
export class SimModule {
  /** `config` is kept by reference: a later change of `brokerUrl` is seen by the next webhook. */
  static forRoot(config: SimulatorConfig): DynamicModule {
    return {
      module: SimModule,
      controllers: [ProviderApiController, SimControlController],
      providers: [
        { provide: SIM_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: SimProblemFilter },
        SimulatedProviders,
        HeldRequests,
        ProviderApi,
        BrokerWebhooks,
        InboundEvents,
      ],
    };
  }
}
