/**
 * The one door to the providers' calls: every call goes through `call()`, so its outcome feeds the
 * provider's breaker (through BreakerOutcomes: here, or the cluster's leader) and the metrics. New
 * sessions ask `candidates()` (the router) which providers to try, in order. Nothing here hands out
 * an adapter's calls: the rest of the app sees `webhooks()`, the part that never calls the vendor.
 */
import { Injectable } from '@nestjs/common';
import { ProviderCallFailure, type CpaasProvider, type ProviderFailure, type ProviderOperation, type ProviderResult } from '@app/cpaas';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { BreakerOutcomes } from './cluster/breaker-outcomes';
import { ProviderAdapters, type ProviderWebhooks } from './provider-adapters';
import { ProviderBreakers } from './provider-breakers';
import { ProviderRouter, type RoutingCandidate } from './provider-router';
import { UnknownProviderError } from './unknown-provider.error';

@Injectable()
export class ProviderRegistry {
  constructor(
    private readonly adapters: ProviderAdapters,
    private readonly breakers: ProviderBreakers,
    private readonly router: ProviderRouter,
    private readonly outcomes: BreakerOutcomes,
    private readonly metrics: BrokerMetrics,
  ) {}

  names(): string[] {
    return [...this.adapters.names];
  }

  has(name: string): boolean {
    return this.adapters.has(name);
  }

  /** What the vendor's webhooks need (verify, parse, answer): no call, so no breaker. */
  webhooks(name: string): ProviderWebhooks {
    return this.adapters.webhooks(name);
  }

  /** Whether the provider's adapter can list and point numbers (its calls still go through `call`). */
  managesNumbers(name: string): boolean {
    return this.adapters.get(name).numbers !== undefined;
  }

  candidates(): Generator<RoutingCandidate> {
    return this.router.candidates();
  }

  /** The providers a session rescue may move a session on `from` to, in routing order (ProviderRouter.admitting). */
  rescueCandidates(from: string): Generator<RoutingCandidate> {
    return this.router.admitting(from);
  }

  /** Runs one provider operation and feeds its outcome to the provider's breaker and the metrics. */
  async call<T>(
    name: string,
    operation: ProviderOperation,
    probe: boolean,
    run: (provider: CpaasProvider) => Promise<ProviderResult<T>>,
  ): Promise<ProviderResult<T>> {
    const result = await run(this.adapters.get(name));
    this.metrics.providerCallDuration.observe({ provider: name, operation }, result.latencyMs / 1000);
    this.record(name, operation, probe, result.ok ? { ok: true, latencyMs: result.latencyMs } : result);
    return result;
  }

  /**
   * Feeds one outcome to the provider's breaker and the metrics: a call's answer, or one the vendor
   * reports later (a bridged call's setup, docs/design.md#relay), which has no latency of ours. `probe`:
   * the call was admitted as a HALF_OPEN probe. On a provider that keeps no sessions every send and every
   * bridged call is probe traffic besides, for any of its sessions: a create makes no call there, so what
   * it carries is what proves it (docs/design.md#provider-breaker).
   */
  record(
    name: string,
    operation: ProviderOperation,
    admittedAsProbe: boolean,
    outcome: { ok: true; latencyMs: number } | { ok: false; failure: ProviderFailure },
  ): void {
    if (!this.adapters.has(name)) throw new UnknownProviderError(name);
    const probe = admittedAsProbe || ((operation === 'sms' || operation === 'call') && !this.adapters.get(name).keepsSessions);
    if (outcome.ok) {
      this.metrics.providerCalls.inc({ provider: name, operation, outcome: 'success', counts_against_provider: 'false' });
      this.outcomes.record(name, { kind: 'success', durationMs: outcome.latencyMs, probe });
      return;
    }
    const counts = outcome.failure.countsAgainstProvider;
    this.metrics.providerCalls.inc({ provider: name, operation, outcome: outcome.failure.cause, counts_against_provider: String(counts) });
    // A failure caused by the caller's own input says nothing about the provider's health.
    if (counts) this.outcomes.record(name, { kind: 'failure', reason: outcome.failure.reason, probe });
  }

  /** Whether the provider keeps sessions of its own (a create binds there), or the broker is its session store. */
  keepsSessions(name: string): boolean {
    return this.adapters.get(name).keepsSessions;
  }

  /** One health check of the provider (the leader's), recorded as a health-check outcome. */
  async healthCheck(name: string): Promise<ProviderResult<void>> {
    let result: ProviderResult<void>;
    try {
      result = await this.adapters.get(name).healthCheck();
    } catch (error) {
      result = {
        ok: false,
        latencyMs: 0,
        failure: new ProviderCallFailure(
          name,
          { countsAgainstProvider: true, cause: 'transport' },
          `health check crashed: ${(error as Error).message}`,
        ),
      };
    }
    this.metrics.providerCallDuration.observe({ provider: name, operation: 'health' }, result.latencyMs / 1000);
    this.metrics.healthProbes.inc({ provider: name, result: result.ok ? 'pass' : 'fail' });
    this.breakers.get(name).record(result.ok ? { kind: 'health-pass' } : { kind: 'health-fail', reason: result.failure.reason });
    return result;
  }
}
