import { Global, Module } from '@nestjs/common';
import { AccountsService } from './accounts.service';
import { AdminTokenGuard, ApiKeyGuard } from './auth.guards';

@Global()
@Module({
  providers: [AccountsService, ApiKeyGuard, AdminTokenGuard],
  exports: [AccountsService, ApiKeyGuard, AdminTokenGuard],
})
export class AccountsModule {}
