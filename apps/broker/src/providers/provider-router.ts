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
   * tried anyway rather than refusing outright (panic mode): first those that are not OPEN (a HALF_OPEN
   * one outside its probe turn), then the OPEN ones, each group in routing order, so no create waits on
   * a provider known to be down while another can take it (docs/design.md#provider-breaker).
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
    // Read once: a try below may move a breaker, and no provider is tried twice or skipped for it.
    const open = new Set(enabled.filter((name) => this.breakers.get(name).status().state === 'OPEN'));
    for (const name of [...enabled.filter((n) => !open.has(n)), ...enabled.filter((n) => open.has(n))]) {
      // A provider that is not OPEN tried ahead of OPEN ones earlier in routing order routes the create away from them.
      if (!open.has(name)) this.routedAway(refused, (r) => open.has(r.provider) && enabled.indexOf(r.provider) < enabled.indexOf(name));
      yield { provider: this.adapters.get(name), probe: false };
    }
  }

  /**
   * Where a session rescue may move a session off `from`, in routing order: each other enabled provider whose
   * breaker admits it as it is reached, as for a create (a HALF_OPEN one in its probe turn). Never panic mode:
   * a session is not moved onto a provider no breaker admits (docs/design.md#session-rescue).
   */
  *admitting(from: string): Generator<RoutingCandidate> {
    for (const name of this.adapters.names) {
      if (name === from || this.breakers.isDisabled(name)) continue;
      const admission = this.breakers.get(name).admit();
      if (admission.admitted) yield { provider: this.adapters.get(name), probe: admission.probe };
    }
  }

  /** Counts the refused providers that `which` picks, each once per create: they leave `refused`. */
  private routedAway(refused: Array<{ provider: string; state: string }>, which: (r: { provider: string }) => boolean = () => true): void {
    for (const labels of refused.filter(which)) {
      this.metrics.sessionsRoutedAway.inc(labels);
      refused.splice(refused.indexOf(labels), 1);
    }
  }
}
