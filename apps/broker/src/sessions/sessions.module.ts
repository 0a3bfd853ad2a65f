import { Module } from '@nestjs/common';
import { ListenClient } from '../database/listen-client';
import { DestinationCache } from '../destinations/destination-cache';
import { DestinationPolicy } from '../destinations/destination-policy';
import { DestinationRepository } from '../destinations/destination.repository';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { JobsModule } from '../jobs/jobs.module';
import { NotificationsModule } from '../notifications';
import { ProvidersModule } from '../providers/providers.module';
import { InteractionRepository, PostgresInteractionRepository } from '../relay/interaction.repository';
import { SessionAllocator } from './session-allocator';
import { SessionReservationRepository } from './session-reservation.repository';
import { SessionSweeper } from './session-sweeper';
import { PostgresSessionRepository, SessionRepository } from './session.repository';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

@Module({
  imports: [ProvidersModule, IdempotencyModule, NotificationsModule, JobsModule],
  providers: [
    SessionsService,
    DestinationPolicy,
    DestinationRepository,
    {
      provide: DestinationCache,
      useFactory: (r: DestinationRepository, l: ListenClient) => new DestinationCache(r, l),
      inject: [DestinationRepository, ListenClient],
    },
    SessionAllocator,
    SessionReservationRepository,
    SessionSweeper,
    { provide: SessionRepository, useClass: PostgresSessionRepository },
    // A session lists its interactions (GET /v1/sessions/:id/interactions); the relay module has its own.
    { provide: InteractionRepository, useClass: PostgresInteractionRepository },
  ],
  controllers: [SessionsController],
  exports: [SessionsService, SessionRepository],
})
export class SessionsModule {}
