import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Subscription } from 'rxjs';
import type { BreakerStatus } from '@app/circuit-breaker';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { BreakerStateStore } from './breaker-state.store';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { ProviderBreakers } from './provider-breakers';

const STATE_GAUGE: Record<BreakerStatus['state'], number> = { CLOSED: 0, HALF_OPEN: 1, OPEN: 2 };

/**
 * Metrics, logs and persistence follow the breakers. A transition decided here is logged and counted;
 * it is persisted (and so announced to the other replicas) when this replica leads, under its fence.
 * A replica cut off from the database decides alone and persists nothing: it rejoins the cluster's
 * state when the database returns.
 */
@Injectable()
export class BreakerWiring implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BreakerWiring.name);
  private readonly subscriptions = new Subscription();

  constructor(
    private readonly breakers: ProviderBreakers,
    private readonly store: BreakerStateStore,
    private readonly leadership: BreakerLeadership,
    private readonly metrics: BrokerMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.subscriptions.add(
      this.leadership.changes$.subscribe((now) => {
        this.metrics.breakerIsLeader.set(now.fence ? 1 : 0);
        this.metrics.breakerLeaderKnown.set(now.leader ? 1 : 0);
      }),
    );
    for (const name of this.breakers.names()) {
      const breaker = this.breakers.get(name);
      this.subscriptions.add(
        breaker.state$.subscribe((status) => this.metrics.breakerState.set({ provider: name }, STATE_GAUGE[status.state])),
      );
      this.subscriptions.add(
        this.breakers.disabled$(name).subscribe((disabled) => this.metrics.providerDisabled.set({ provider: name }, disabled ? 1 : 0)),
      );
      this.subscriptions.add(
        breaker.transitions$.subscribe((transition) => {
          if (transition.adopted) return;
          this.metrics.breakerTransitions.inc({ provider: name, from: transition.from, to: transition.to });
          const fence = this.leadership.current.fence;
          this.logger.warn(
            { provider: name, from: transition.from, to: transition.to, reason: transition.reason, lastError: transition.lastError },
            `provider ${name} breaker ${transition.from} → ${transition.to}: ${transition.reason}${fence ? '' : ` (${this.leadership.current.scope === 'replica' ? 'this replica alone' : 'not the leader: not persisted'})`}`,
          );
          if (fence) this.store.recordTransition(name, transition, breaker.toJSON(), fence);
        }),
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriptions.unsubscribe();
    await this.store.flush();
  }
}
