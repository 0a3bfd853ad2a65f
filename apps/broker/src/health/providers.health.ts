import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { ProviderRegistry } from '../providers/provider-registry';

/**
 * Readiness of the providers, from memory. Down only when no provider can take a session: every
 * one is disabled by hand. All breakers OPEN is still ready: the broker then tries each in order.
 */
@Injectable()
export class ProvidersHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly registry: ProviderRegistry,
  ) {}

  check(key: string): HealthIndicatorResult {
    const indicator = this.health.check(key);
    const providers = Object.fromEntries(this.registry.healthAll().map((p) => [p.name, { state: p.status.state, disabled: p.disabled }]));
    const usable = this.registry.healthAll().some((p) => !p.disabled);
    return usable ? indicator.up({ providers }) : indicator.down({ providers, message: 'every provider is disabled' });
  }
}
