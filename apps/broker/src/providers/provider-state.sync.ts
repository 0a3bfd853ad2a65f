import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Subscription } from 'rxjs';
import type { BreakerStatus } from '@app/circuit-breaker';
import { ListenClient } from '../database/listen-client';
import { BreakerLeadership, type Leadership } from './cluster/breaker-leadership';
import { ProviderBreakers } from './provider-breakers';
import { PROVIDER_STATE_CHANNEL, ProviderStateRepository, type SavedProviderState } from './provider-state.repository';

/**
 * Brings the persisted state into this replica's breakers: at start (a restart mid-outage stays
 * OPEN), on every NOTIFY of a change another replica persisted, and in full whenever this replica may
 * have missed some (the LISTEN connection came back, it rejoined the cluster, or a new term of
 * leadership began here). A replica whose breakers decide (the leader, or one cut off) takes only the
 * operator's disabled flag from a notification: its own breakers are ahead of what is persisted. A new
 * leader, or a leader whose LISTEN connection came back, keeps its breakers' live counts (every replica
 * counts the cluster's outcomes, BreakerOutcomes) and takes a persisted state only where it is a later
 * one than its own (a transition it did not hear of); a replica rejoining the cluster takes the
 * cluster's state whole.
 */
@Injectable()
export class ProviderStateSync implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ProviderStateSync.name);
  private readonly subscriptions = new Subscription();
  private unlisten: Array<() => void> = [];
  private last: Leadership | null = null;

  constructor(
    private readonly repository: ProviderStateRepository,
    private readonly breakers: ProviderBreakers,
    private readonly leadership: BreakerLeadership,
    private readonly listener: ListenClient,
  ) {}

  async onModuleInit(): Promise<void> {
    const saved = await this.repository.loadAll();
    for (const [provider, state] of saved) this.apply(provider, state, true);
  }

  onApplicationBootstrap(): void {
    this.unlisten.push(this.listener.subscribe(PROVIDER_STATE_CHANNEL, (payload) => void this.onNotification(payload)));
    this.unlisten.push(
      this.listener.onReconnect(
        () => void this.resync('the LISTEN connection came back', this.leadership.current.fence ? 'later-only' : 'whole'),
      ),
    );
    this.subscriptions.add(
      this.leadership.changes$.subscribe((now) => {
        const before = this.last;
        this.last = now;
        if (!before) return;
        if (now.scope === 'cluster' && before.scope === 'replica') void this.resync('this replica rejoined the cluster', 'whole');
        else if (now.fence && now.fence.epoch !== before.fence?.epoch)
          void this.resync(`term ${now.fence.epoch} of leadership began here`, 'later-only');
      }),
    );
  }

  onApplicationShutdown(): void {
    this.subscriptions.unsubscribe();
    for (const off of this.unlisten.splice(0)) off();
  }

  private async onNotification(payload: string): Promise<void> {
    try {
      const { provider, origin } = JSON.parse(payload) as { provider?: string; origin?: string };
      if (!provider || origin === this.leadership.replica || !this.breakers.has(provider)) return;
      const saved = await this.repository.load(provider);
      if (saved) this.apply(provider, saved, !this.leadership.decidesHere);
    } catch (error) {
      this.logger.warn({ err: error }, 'could not adopt a breaker change from another replica');
    }
  }

  /** `later-only`: keep this replica's live counts, adopting a persisted state only where it was entered later. */
  private async resync(why: string, take: 'whole' | 'later-only'): Promise<void> {
    try {
      const saved = await this.repository.loadAll();
      for (const [provider, state] of saved) {
        if (!this.breakers.has(provider)) continue;
        this.apply(provider, state, take === 'whole' || isLater(state, this.breakers.get(provider).status()));
      }
      this.logger.log(`breaker state re-read from the database: ${why}`);
    } catch (error) {
      this.logger.warn(`breaker state not re-read (${why}): ${(error as Error).message}`);
    }
  }

  private apply(provider: string, state: SavedProviderState, withSnapshot: boolean): void {
    if (!this.breakers.has(provider)) return;
    this.breakers.setDisabled(provider, state.disabled, state.disabledReason);
    if (withSnapshot && state.snapshot) this.breakers.get(provider).adopt(state.snapshot);
  }
}

/** Whether the persisted state is a later one than the breaker's: entered after it (or at once, another state). */
function isLater(saved: SavedProviderState, local: BreakerStatus): boolean {
  if (!saved.snapshot) return false;
  return saved.snapshot.since > local.since || (saved.snapshot.since === local.since && saved.snapshot.state !== local.state);
}
