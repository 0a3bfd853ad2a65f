import { Global, Module } from '@nestjs/common';
import { AccountsAdminController } from './accounts-admin.controller';
import { AccountsService } from './accounts.service';
import { AdminTokenGuard, ApiKeyGuard } from './auth.guards';

@Global()
@Module({
  providers: [AccountsService, ApiKeyGuard, AdminTokenGuard],
  controllers: [AccountsAdminController],
  exports: [AccountsService, ApiKeyGuard, AdminTokenGuard],
})
export class AccountsModule {}
