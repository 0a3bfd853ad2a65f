import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { InterceptModule } from '../intercept';
import { JobsModule } from '../jobs/jobs.module';
import { NotificationsModule } from '../notifications';
import { ProvidersModule } from '../providers/providers.module';
import { SessionsModule } from '../sessions/sessions.module';
import { InboundController } from './inbound.controller';
import { InteractionRepository, PostgresInteractionRepository } from './interaction.repository';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';
import { RelayWorker } from './relay-worker';
import { RelayService } from './relay.service';

@Module({
  imports: [ProvidersModule, SessionsModule, NotificationsModule, JobsModule, InterceptModule, IdempotencyModule],
  providers: [RelayService, RelayWorker, MessagesService, { provide: InteractionRepository, useClass: PostgresInteractionRepository }],
  controllers: [InboundController, MessagesController],
  // The Twilio-Proxy-compatible API's MessageInteractions are the app's messages (compat/twilio-proxy).
  exports: [MessagesService],
})
export class RelayModule {}
