import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { BreakerTransition } from '@app/circuit-breaker';
import { DeliveryWaker, DeliveryWakes, EventOutbox } from '../notifications';
import { BreakerStateStore } from './breaker-state.store';

/**
 * Each persisted breaker transition becomes a `provider.state_changed` webhook to OPS_WEBHOOK_URL, written in the
 * transition's transaction; once the store tells it has committed (`transitions$`), the delivery workers are woken.
 */
@Injectable()
export class ProviderOpsEvents implements OnModuleInit {
  private readonly logger = new Logger(ProviderOpsEvents.name);
  /** The deliveries each transition's transaction recorded, until it is told committed (or dropped with a rollback). */
  private readonly recorded = new WeakMap<BreakerTransition, DeliveryWakes>();

  constructor(
    private readonly store: BreakerStateStore,
    private readonly outbox: EventOutbox,
    private readonly waker: DeliveryWaker,
  ) {}

  onModuleInit(): void {
    this.store.writeWithTransition(async (provider, transition, manager) => {
      const wakes = new DeliveryWakes();
      await this.outbox.recordOps(
        manager,
        {
          type: 'provider.state_changed',
          data: {
            provider,
            from: transition.from,
            to: transition.to,
            reason: transition.reason,
            lastError: transition.lastError,
            at: new Date(transition.at).toISOString(),
            forcedBy: transition.forcedBy,
          },
          receivedAt: new Date(transition.at),
        },
        wakes,
      );
      this.recorded.set(transition, wakes);
    });
    // For the app's lifetime (the store's repository, whose subject this is, lives as long): a transition the shutdown's
    // flush commits still wakes its delivery.
    this.store.transitions$.subscribe(({ transition }) => {
      const wakes = this.recorded.get(transition);
      if (!wakes) return;
      this.recorded.delete(transition);
      void this.waker.wake(wakes, (message) => this.logger.warn(message));
    });
  }
}
