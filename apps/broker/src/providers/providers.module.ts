import { Module } from '@nestjs/common';
import { StreamSlots } from '../common/http';
import { NotificationsModule } from '../notifications';
import { BreakerStateStore } from './breaker-state.store';
import { CpaasHealthController } from './cpaas-health.controller';
import { HealthProber } from './health-prober';
import { NumberImport } from './number-import';
import { PoolUsage } from './pool-usage';
import { ProviderOpsEvents } from './provider-ops-events';
import { BREAKER_SCHEDULER, ProviderRegistry, systemBreakerScheduler } from './provider-registry';
import { ProviderStateSync } from './provider-state.sync';
import { ProvidersAdminController } from './providers-admin.controller';

@Module({
  imports: [NotificationsModule],
  providers: [
    { provide: BREAKER_SCHEDULER, useFactory: systemBreakerScheduler },
    ProviderRegistry,
    BreakerStateStore,
    HealthProber,
    ProviderStateSync,
    ProviderOpsEvents,
    PoolUsage,
    StreamSlots,
    NumberImport,
  ],
  controllers: [CpaasHealthController, ProvidersAdminController],
  exports: [ProviderRegistry, BreakerStateStore, HealthProber, PoolUsage],
})
export class ProvidersModule {}
