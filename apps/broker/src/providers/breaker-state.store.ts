import { Injectable, Logger } from '@nestjs/common';
import type { BreakerSnapshot, BreakerTransition } from '@app/circuit-breaker';
import { ProviderStateRepository, type LeaderFence, type TransitionHook } from './provider-state.repository';

/**
 * Persists each provider's breaker transitions (the history ops read) and snapshot, in the order they
 * happened, off the path of any request; a failed or fenced-off write is logged and never takes the
 * breaker down. Every write is announced (NOTIFY) so the other replicas adopt it (ProviderStateSync).
 */
@Injectable()
export class BreakerStateStore {
  private readonly logger = new Logger(BreakerStateStore.name);
  private queue: Promise<void> = Promise.resolve();
  /** Identifies this process in notifications, so it ignores its own. */
  readonly origin = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  private readonly afterTransition: TransitionHook[] = [];

  constructor(private readonly repository: ProviderStateRepository) {}

  /** Lets another module write in the same transaction as a transition (the ops webhook outbox). */
  onTransition(hook: TransitionHook): void {
    this.afterTransition.push(hook);
  }

  /**
   * `fence`: the leader's lease; null for a write that needs none (no cluster: a replica on its own). `overrideId`: the
   * operator's request a forced transition applied.
   */
  recordTransition(
    provider: string,
    transition: BreakerTransition,
    snapshot: BreakerSnapshot,
    fence: LeaderFence | null,
    overrideId: string | null = null,
  ): void {
    this.enqueue(`transition of ${provider}`, async () => {
      const written = await this.repository.saveTransition(
        provider,
        transition,
        snapshot,
        fence,
        this.notice(provider),
        this.afterTransition,
        overrideId,
      );
      if (!written) this.logger.warn(`transition of ${provider} dropped: this replica no longer holds the breaker lease`);
    });
  }

  recordSnapshot(provider: string, snapshot: BreakerSnapshot, fence: LeaderFence): void {
    this.enqueue(`state of ${provider}`, async () => {
      await this.repository.saveSnapshot(provider, snapshot, fence, this.notice(provider));
    });
  }

  async saveDisabled(provider: string, disabled: boolean, reason: string | null): Promise<void> {
    await this.repository.saveDisabled(provider, disabled, reason, this.notice(provider));
  }

  /** Waits for the writes already queued (shutdown, tests). */
  flush(): Promise<void> {
    return this.queue;
  }

  private notice(provider: string): string {
    return JSON.stringify({ provider, origin: this.origin });
  }

  private enqueue(what: string, write: () => Promise<void>): void {
    this.queue = this.queue.then(write).catch((error: unknown) => this.logger.error({ err: error }, `could not persist the ${what}`));
  }
}
