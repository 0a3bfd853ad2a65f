import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ProvidersModule } from '../providers/providers.module';
import { DatabaseHealthIndicator } from './database.health';
import { HealthController } from './health.controller';
import { ProvidersHealthIndicator } from './providers.health';

@Module({
  imports: [TerminusModule.forRoot({ errorLogStyle: 'json' }), ProvidersModule],
  controllers: [HealthController],
  providers: [DatabaseHealthIndicator, ProvidersHealthIndicator],
})
export class HealthModule {}
