export { Account } from './account.entity';
export { ApiKey } from './api-key.entity';
export { AccountsModule } from './accounts.module';
export { AccountsService, type Principal } from './accounts.service';
export { AdminTokenGuard, ApiKeyGuard, CurrentPrincipal } from './auth.guards';
