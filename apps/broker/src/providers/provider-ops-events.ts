import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DeliveryWakes, EventOutbox } from '../notifications';
import { BreakerStateStore } from './breaker-state.store';

/**
 * Each persisted breaker transition becomes a `provider.state_changed` webhook to OPS_WEBHOOK_URL, in the same
 * transaction; the delivery workers are woken once it has committed.
 */
@Injectable()
export class ProviderOpsEvents implements OnModuleInit {
  private readonly logger = new Logger(ProviderOpsEvents.name);

  constructor(
    private readonly store: BreakerStateStore,
    private readonly outbox: EventOutbox,
  ) {}

  onModuleInit(): void {
    this.store.onTransition(async (provider, transition, manager) => {
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
      return (runner) => wakes.send(runner, (message) => this.logger.warn(message));
    });
  }
}
