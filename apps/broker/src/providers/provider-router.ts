import { Injectable } from '@nestjs/common';
import type { CpaasProvider } from '@app/cpaas';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { ProviderAdapters } from './provider-adapters';
import { ProviderBreakers } from './provider-breakers';

/** A provider a new session may try, and whether that try is a HALF_OPEN probe. */
export interface RoutingCandidate {
  provider: CpaasProvider;
  probe: boolean;
}

/**
 * Which providers a new session tries, in order: each enabled provider whose breaker admits
 * it as it is reached. In memory only: no database round trip or lock on the path of a create.
 */
@Injectable()
export class ProviderRouter {
  constructor(
    private readonly adapters: ProviderAdapters,
    private readonly breakers: ProviderBreakers,
    private readonly metrics: BrokerMetrics,
  ) {
    // Each series exists from the start, at 0, so a dashboard shows it before the first outage.
    for (const provider of adapters.names)
      for (const state of ['OPEN', 'HALF_OPEN']) metrics.sessionsRoutedAway.inc({ provider, state }, 0);
  }

  /**
   * Admission has effects (a HALF_OPEN breaker counts towards its probe share), so each breaker is
   * asked only when its provider is reached. When no breaker admits at all, every enabled provider is
   * tried in order anyway rather than refusing outright (panic mode).
   */
  *candidates(): Generator<RoutingCandidate> {
    let admittedAny = false;
    // Refused by their breaker: routed away, unless no breaker admits (then every provider is tried anyway).
    const refused: Array<{ provider: string; state: string }> = [];
    const enabled = this.adapters.names.filter((name) => !this.breakers.isDisabled(name));
    for (const name of enabled) {
      const breaker = this.breakers.get(name);
      const admission = breaker.admit();
      if (!admission.admitted) {
        refused.push({ provider: name, state: breaker.status().state });
        continue;
      }
      admittedAny = true;
      this.routedAway(refused);
      yield { provider: this.adapters.get(name), probe: admission.probe };
    }
    if (admittedAny) {
      this.routedAway(refused);
      return;
    }
    for (const name of enabled) yield { provider: this.adapters.get(name), probe: false };
  }

  private routedAway(refused: Array<{ provider: string; state: string }>): void {
    for (const labels of refused.splice(0)) this.metrics.sessionsRoutedAway.inc(labels);
  }
}
