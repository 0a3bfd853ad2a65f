export { Account } from './account.entity';
export { ApiKey } from './api-key.entity';
export { AccountsModule } from './accounts.module';
export { AccountsService, type Principal } from './accounts.service';
export { AdminTokenGuard, ApiKeyGuard, CurrentPrincipal, requireMetricsToken } from './auth.guards';
export { RateLimits, TokenBucket, type BucketRule } from './rate-limits';
