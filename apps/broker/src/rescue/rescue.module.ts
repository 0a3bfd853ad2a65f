import { Module } from '@nestjs/common';
import { JobsModule } from '../jobs/jobs.module';
import { NotificationsModule } from '../notifications';
import { ProvidersModule } from '../providers/providers.module';
import { RelayModule } from '../relay/relay.module';
import { RescueController } from './rescue.controller';
import { RescueSettingsRepository } from './rescue-settings.repository';
import { SessionMoveRepository } from './session-move.repository';
import { SessionRescue } from './session-rescue';

/**
 * Session rescue (docs/design.md#session-rescue): an account's opt-in (`/v1/account/rescue`), and the breaker
 * leader's moves of its sessions off a provider that stays OPEN. Nothing imports this folder.
 */
@Module({
  imports: [ProvidersModule, NotificationsModule, JobsModule, RelayModule],
  providers: [RescueSettingsRepository, SessionMoveRepository, SessionRescue],
  controllers: [RescueController],
})
export class RescueModule {}
