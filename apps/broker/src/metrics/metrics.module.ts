import { Global, Module } from '@nestjs/common';
import { BrokerMetrics } from './broker-metrics';
import { MetricsController } from './metrics.controller';

@Global()
@Module({ providers: [BrokerMetrics], controllers: [MetricsController], exports: [BrokerMetrics] })
export class MetricsModule {}
