import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ProvidersModule } from '../providers/providers.module';
import { DatabaseServerRepository } from './database-server.repository';
import { DatabaseHealthIndicator } from './database.health';
import { HealthController } from './health.controller';
import { ProvidersHealthIndicator } from './providers.health';

@Module({
  imports: [TerminusModule.forRoot({ errorLogStyle: 'json' }), ProvidersModule],
  controllers: [HealthController],
  providers: [DatabaseServerRepository, DatabaseHealthIndicator, ProvidersHealthIndicator],
})
export class HealthModule {}
