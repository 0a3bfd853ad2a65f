import { Module } from '@nestjs/common';
import { DestinationsModule } from '../destinations/destinations.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { JobsModule } from '../jobs/jobs.module';
import { NotificationsModule } from '../notifications';
import { ProvidersModule } from '../providers/providers.module';
import { SessionAllocator } from './session-allocator';
import { SessionReservationRepository } from './session-reservation.repository';
import { SessionSweeper } from './session-sweeper';
import { PostgresSessionRepository, SessionRepository } from './session.repository';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

@Module({
  imports: [ProvidersModule, IdempotencyModule, NotificationsModule, JobsModule, DestinationsModule],
  providers: [
    SessionsService,
    SessionAllocator,
    SessionReservationRepository,
    SessionSweeper,
    { provide: SessionRepository, useClass: PostgresSessionRepository },
  ],
  controllers: [SessionsController],
  exports: [SessionsService, SessionRepository],
})
export class SessionsModule {}
