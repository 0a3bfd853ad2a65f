import { Module } from '@nestjs/common';
import { StreamSlots } from '../common/http';
import { NotificationsModule } from '../notifications';
import { NumbersModule } from '../numbers/numbers.module';
import { BreakerStateStore } from './breaker-state.store';
import { BreakerWiring } from './breaker-wiring';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { BreakerOutcomes } from './cluster/breaker-outcomes';
import { BreakerOverrides } from './cluster/breaker-overrides';
import { CpaasHealthController } from './cpaas-health.controller';
import { HealthProber } from './health-prober';
import { NumberImport } from './number-import';
import { PoolUsage } from './pool-usage';
import { ProviderAdapters } from './provider-adapters';
import { BREAKER_SCHEDULER, ProviderBreakers, systemBreakerScheduler } from './provider-breakers';
import { ProviderOpsEvents } from './provider-ops-events';
import { ProviderRegistry } from './provider-registry';
import { ProviderRouter } from './provider-router';
import { ProviderStateRepository } from './provider-state.repository';
import { ProviderStateSync } from './provider-state.sync';
import { ProvidersAdminController } from './providers-admin.controller';

/**
 * The providers: adapters (module-private), one breaker each (shared by the cluster through a leader,
 * docs/operations.md), the router new sessions ask, and the call gateway every provider call goes through.
 */
@Module({
  imports: [NotificationsModule, NumbersModule],
  providers: [
    { provide: BREAKER_SCHEDULER, useFactory: systemBreakerScheduler },
    ProviderAdapters,
    ProviderBreakers,
    ProviderRouter,
    ProviderRegistry,
    ProviderStateRepository,
    BreakerStateStore,
    BreakerLeadership,
    BreakerOutcomes,
    BreakerOverrides,
    BreakerWiring,
    HealthProber,
    ProviderStateSync,
    ProviderOpsEvents,
    PoolUsage,
    StreamSlots,
    NumberImport,
  ],
  controllers: [CpaasHealthController, ProvidersAdminController],
  exports: [ProviderRegistry, ProviderBreakers, BreakerLeadership, BreakerOutcomes, BreakerStateStore, HealthProber, PoolUsage],
})
export class ProvidersModule {}
