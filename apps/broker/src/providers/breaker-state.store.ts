import { Injectable, Logger } from '@nestjs/common';
import type { Observable } from 'rxjs';
import type { BreakerSnapshot, BreakerTransition } from '@app/circuit-breaker';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { ProviderStateRepository, type CommittedTransition, type LeaderFence, type TransitionWriter } from './provider-state.repository';

/**
 * Persists each provider's breaker transitions (the history ops read) and snapshot, in the order they
 * happened, off the path of any request; a failed or fenced-off write is logged and never takes the
 * breaker down. Every write is announced (NOTIFY) so the other replicas adopt it (ProviderStateSync), with
 * this replica's name (BreakerLeadership.replica; `origin` in the notification) so it ignores its own.
 */
@Injectable()
export class BreakerStateStore {
  private readonly logger = new Logger(BreakerStateStore.name);
  private queue: Promise<void> = Promise.resolve();
  private readonly writers: TransitionWriter[] = [];
  /** Each transition once it has committed (ProviderStateRepository.transitions$). */
  readonly transitions$: Observable<CommittedTransition>;

  constructor(
    private readonly repository: ProviderStateRepository,
    private readonly leadership: BreakerLeadership,
  ) {
    this.transitions$ = repository.transitions$;
  }

  /**
   * Lets another module write in the same transaction as a transition (the ops webhook outbox); what follows its
   * commit listens to `transitions$`.
   */
  writeWithTransition(writer: TransitionWriter): void {
    this.writers.push(writer);
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
        this.writers,
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
    return JSON.stringify({ provider, origin: this.leadership.replica });
  }

  private enqueue(what: string, write: () => Promise<void>): void {
    this.queue = this.queue.then(write).catch((error: unknown) => this.logger.error({ err: error }, `could not persist the ${what}`));
  }
}
