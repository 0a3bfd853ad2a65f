import { Global, Module } from '@nestjs/common';
import { AccountsAdminController } from './accounts-admin.controller';
import { systemClock } from '../notifications/clock';
import { AccountRepository } from './account.repository';
import { AccountsService } from './accounts.service';
import { RATE_LIMIT_CLOCK, RateLimits } from './rate-limits';
import { AdminTokenGuard, ApiKeyGuard } from './auth.guards';

@Global()
@Module({
  providers: [
    AccountsService,
    AccountRepository,
    ApiKeyGuard,
    AdminTokenGuard,
    RateLimits,
    { provide: RATE_LIMIT_CLOCK, useValue: systemClock },
  ],
  controllers: [AccountsAdminController],
  exports: [AccountsService, ApiKeyGuard, AdminTokenGuard, RateLimits],
})
export class AccountsModule {}
