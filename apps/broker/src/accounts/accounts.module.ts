import { Global, Module } from '@nestjs/common';
import { DestinationsModule } from '../destinations/destinations.module';
import { AccountSettingsController } from './account-settings.controller';
import { AccountsAdminController } from './accounts-admin.controller';
import { AccountRepository } from './account.repository';
import { AccountsService } from './accounts.service';
import { RateLimits } from './rate-limits';
import { AdminTokenGuard, ApiKeyGuard } from './auth.guards';

@Global()
@Module({
  imports: [DestinationsModule],
  providers: [AccountsService, AccountRepository, ApiKeyGuard, AdminTokenGuard, RateLimits],
  controllers: [AccountsAdminController, AccountSettingsController],
  exports: [AccountsService, ApiKeyGuard, AdminTokenGuard, RateLimits],
})
export class AccountsModule {}
