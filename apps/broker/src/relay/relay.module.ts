import { Module } from '@nestjs/common';
import { JobsModule } from '../jobs/jobs.module';
import { NotificationsModule } from '../notifications';
import { ProvidersModule } from '../providers/providers.module';
import { SessionsModule } from '../sessions/sessions.module';
import { InboundController } from './inbound.controller';
import { InteractionRepository, PostgresInteractionRepository } from './interaction.repository';
import { RelayWorker } from './relay-worker';
import { RelayService } from './relay.service';
import { SessionRelayLimit } from './session-relay-limit';

@Module({
  imports: [ProvidersModule, SessionsModule, NotificationsModule, JobsModule],
  providers: [RelayService, RelayWorker, SessionRelayLimit, { provide: InteractionRepository, useClass: PostgresInteractionRepository }],
  controllers: [InboundController],
})
export class RelayModule {}
