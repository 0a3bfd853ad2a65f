import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { BreakerLeadership } from '../providers/cluster/breaker-leadership';
import { ProviderBreakers } from '../providers/provider-breakers';

/**
 * Readiness of the providers, from memory. Down only when no provider can take a session: every
 * one is disabled by hand. All breakers OPEN is still ready: the broker then tries each in order; so is
 * a replica cut off from the cluster's breaker state (`scope: replica`), which decides on its own.
 */
@Injectable()
export class ProvidersHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly breakers: ProviderBreakers,
    private readonly leadership: BreakerLeadership,
  ) {}

  check(key: string): HealthIndicatorResult {
    const indicator = this.health.check(key);
    const scope = this.leadership.current.scope;
    const all = this.breakers.healthAll();
    const providers = Object.fromEntries(all.map((p) => [p.name, { state: p.status.state, disabled: p.disabled, scope }]));
    const usable = all.some((p) => !p.disabled);
    return usable ? indicator.up({ providers }) : indicator.down({ providers, message: 'every provider is disabled' });
  }
}
