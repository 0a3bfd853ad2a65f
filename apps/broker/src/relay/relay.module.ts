import { Module } from '@nestjs/common';
import { ProvidersModule } from '../providers/providers.module';
import { SessionsModule } from '../sessions/sessions.module';
import { InboundController } from './inbound.controller';
import { RelayWorker } from './relay-worker';
import { RelayService } from './relay.service';

@Module({
  imports: [ProvidersModule, SessionsModule],
  providers: [RelayService, RelayWorker],
  controllers: [InboundController],
})
export class RelayModule {}
