import { Module } from '@nestjs/common';
import { DestinationsModule } from '../destinations/destinations.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { InterceptModule } from '../intercept';
import { JobsModule } from '../jobs/jobs.module';
import { NotificationsModule } from '../notifications';
import { NumbersModule } from '../numbers/numbers.module';
import { ProvidersModule } from '../providers/providers.module';
import { SessionsModule } from '../sessions/sessions.module';
import { InboundController } from './inbound.controller';
import { InteractionRepository, PostgresInteractionRepository } from './interaction.repository';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';
import { RelayWorker } from './relay-worker';
import { RelayService } from './relay.service';
import { SessionInteractions } from './session-interactions';
import { SessionInteractionsController } from './session-interactions.controller';
import { SessionRelayLimit } from './session-relay-limit';

@Module({
  imports: [
    ProvidersModule,
    SessionsModule,
    NotificationsModule,
    NumbersModule,
    JobsModule,
    InterceptModule,
    IdempotencyModule,
    DestinationsModule,
  ],
  providers: [
    RelayService,
    RelayWorker,
    MessagesService,
    SessionRelayLimit,
    SessionInteractions,
    { provide: InteractionRepository, useClass: PostgresInteractionRepository },
  ],
  controllers: [InboundController, MessagesController, SessionInteractionsController],
  // MessageInteractions of the Twilio-Proxy-compatible API are the app's messages (compat/twilio-proxy); a session
  // rescue sends its notices and the relays that waited right after a move (apps/broker/src/rescue).
  exports: [MessagesService, RelayService],
})
export class RelayModule {}
