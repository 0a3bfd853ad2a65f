import { Module } from '@nestjs/common';
import { DestinationPolicy } from '../destinations/destination-policy';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { NotificationsModule } from '../notifications';
import { ProvidersModule } from '../providers/providers.module';
import { SessionAllocator } from './session-allocator';
import { SessionEvents } from './session-events';
import { SessionReservationRepository } from './session-reservation.repository';
import { SessionSweeper } from './session-sweeper';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

@Module({
  imports: [ProvidersModule, IdempotencyModule, NotificationsModule],
  providers: [SessionsService, DestinationPolicy, SessionAllocator, SessionReservationRepository, SessionEvents, SessionSweeper],
  controllers: [SessionsController],
  exports: [SessionsService, SessionEvents],
})
export class SessionsModule {}
