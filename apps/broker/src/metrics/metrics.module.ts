import { Global, Module } from '@nestjs/common';
import { BrokerMetrics } from './broker-metrics';
import { EventLoopDelaySampler } from './event-loop-delay';
import { MetricsController } from './metrics.controller';

@Global()
@Module({ providers: [BrokerMetrics, EventLoopDelaySampler], controllers: [MetricsController], exports: [BrokerMetrics] })
export class MetricsModule {}
