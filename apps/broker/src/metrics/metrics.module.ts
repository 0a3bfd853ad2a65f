import { Global, Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { JobsModule } from '../jobs/jobs.module';
import { BrokerMetrics } from './broker-metrics';
import { ClusterGauges } from './cluster-gauges';
import { ClusterGaugesRepository } from './cluster-gauges.repository';
import { EventLoopDelaySampler } from './event-loop-delay';
import { HttpMetricsMiddleware } from './http-metrics.middleware';
import { MetricsController } from './metrics.controller';

@Global()
@Module({
  imports: [JobsModule],
  providers: [BrokerMetrics, EventLoopDelaySampler, ClusterGauges, ClusterGaugesRepository, HttpMetricsMiddleware],
  controllers: [MetricsController],
  exports: [BrokerMetrics],
})
export class MetricsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Every path and method, 404s included, as the request log sees them.
    consumer.apply(HttpMetricsMiddleware).forRoutes({ path: '{/*splat}', method: RequestMethod.ALL });
  }
}
