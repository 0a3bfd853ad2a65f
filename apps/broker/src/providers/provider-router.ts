import { Injectable } from '@nestjs/common';
import type { CpaasProvider } from '@app/cpaas';
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
  ) {}

  /**
   * Admission has effects (a HALF_OPEN breaker counts towards its probe share), so each breaker is
   * asked only when its provider is reached. When no breaker admits at all, every enabled provider is
   * tried anyway rather than refusing outright (panic mode): first those that are not OPEN (a HALF_OPEN
   * one outside its probe turn), then the OPEN ones, each group in routing order, so no create waits on
   * a provider known to be down while another can take it (docs/design.md#provider-breaker).
   */
  *candidates(): Generator<RoutingCandidate> {
    let admittedAny = false;
    const enabled = this.adapters.names.filter((name) => !this.breakers.isDisabled(name));
    for (const name of enabled) {
      const admission = this.breakers.get(name).admit();
      if (!admission.admitted) continue;
      admittedAny = true;
      yield { provider: this.adapters.get(name), probe: admission.probe };
    }
    if (admittedAny) return;
    // Read once: a try below may move a breaker, and no provider is tried twice or skipped for it.
    const open = new Set(enabled.filter((name) => this.breakers.get(name).status().state === 'OPEN'));
    for (const name of [...enabled.filter((n) => !open.has(n)), ...enabled.filter((n) => open.has(n))]) {
      yield { provider: this.adapters.get(name), probe: false };
    }
  }
}
