/**
 * Where a provider call's outcome goes (docs/operations.md). Into the local breaker at once, on every replica,
 * and, on a replica in the cluster, into a small in-memory batch that goes to every other replica in one
 * NOTIFY after BREAKER_OUTCOME_BATCH_MS. So every replica's breakers count the cluster's outcomes (the 5th
 * consecutive failure cluster-wide trips), but only the leader's decide: on the other replicas they follow
 * (count, make no transition) and adopt what the leader persists. A replica that takes over leads breakers
 * that hold the cluster's live counts, not the last persisted snapshot's. A replica cut off from the
 * database decides alone. Recording never waits: the create that made the call has already answered, or
 * answers without any database statement of ours.
 */
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Outcome } from '@app/circuit-breaker';
import { Subscription, type SchedulerLike } from 'rxjs';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { ListenClient } from '../../database/listen-client';
import { BREAKER_SCHEDULER, ProviderBreakers } from '../provider-breakers';
import { ProviderStateRepository } from '../provider-state.repository';
import { BreakerLeadership } from './breaker-leadership';

/** Replicas NOTIFY their outcomes here; every other replica counts them, the leader decides on them. */
export const BREAKER_OUTCOME_CHANNEL = 'broker_breaker_outcomes';

/** Outcomes per NOTIFY: well under PostgreSQL's 8000-byte payload with reasons cut to 200 characters. */
const MAX_BATCH = 25;
const MAX_REASON = 200;

/** [provider, kind, probe, durationMs or reason]: compact, since a NOTIFY payload is small. */
type WireOutcome = [string, 's' | 'f', 0 | 1, number | string];

interface WireBatch {
  from: string;
  /** When the batch was sent (the sender's breaker clock), for measuring the delay to the leader. */
  at: number;
  o: WireOutcome[];
}

@Injectable()
export class BreakerOutcomes implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BreakerOutcomes.name);
  private pending: WireOutcome[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();
  private unlisten: (() => void) | null = null;
  private readonly roles = new Subscription();
  private readonly batchMs: number;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly repository: ProviderStateRepository,
    private readonly listener: ListenClient,
    private readonly breakers: ProviderBreakers,
    private readonly leadership: BreakerLeadership,
    @Inject(BREAKER_SCHEDULER) private readonly scheduler: SchedulerLike,
  ) {
    this.batchMs = config.breaker.outcomeBatchMs;
  }

  onApplicationBootstrap(): void {
    this.unlisten = this.listener.subscribe(BREAKER_OUTCOME_CHANNEL, (payload) => this.onBatch(payload));
    // Leading (or cut off, deciding alone), this replica's breakers decide; following, they only count.
    this.roles.add(this.leadership.changes$.subscribe((now) => this.breakers.setFollowing(now.fence === null && now.scope === 'cluster')));
  }

  async onApplicationShutdown(): Promise<void> {
    this.roles.unsubscribe();
    this.unlisten?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flush();
    await this.sending;
  }

  record(provider: string, outcome: Outcome): void {
    this.breakers.get(provider).record(outcome);
    // Cut off, no one else can hear it. Health checks are the leader's, persisted after each: call outcomes alone travel.
    if (this.leadership.current.scope !== 'cluster') return;
    if (outcome.kind === 'success') this.pending.push([provider, 's', outcome.probe === false ? 0 : 1, outcome.durationMs ?? 0]);
    else if (outcome.kind === 'failure')
      this.pending.push([provider, 'f', outcome.probe === false ? 0 : 1, outcome.reason.slice(0, MAX_REASON)]);
    else return;
    if (this.pending.length >= MAX_BATCH) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, this.batchMs);
    }
  }

  /** Sends what is pending now (already counted here); a batch that cannot be sent means this replica is cut off. */
  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const payload: WireBatch = { from: this.leadership.replica, at: this.scheduler.now(), o: batch };
    this.sending = this.sending
      .then(() => this.repository.notify(BREAKER_OUTCOME_CHANNEL, JSON.stringify(payload)))
      .then(
        () => undefined,
        (error: unknown) => {
          this.logger.warn(`outcomes not sent to the other replicas (${(error as Error).message}); this replica decides alone`);
          this.leadership.noteUnreachable();
        },
      );
  }

  private onBatch(payload: string): void {
    let batch: WireBatch;
    try {
      batch = JSON.parse(payload) as WireBatch;
    } catch {
      return;
    }
    if (batch.from === this.leadership.replica || !Array.isArray(batch.o)) return;
    this.apply(batch.o);
  }

  private apply(outcomes: WireOutcome[]): void {
    for (const [provider, kind, probe, detail] of outcomes) {
      if (!this.breakers.has(provider)) continue;
      this.breakers
        .get(provider)
        .record(
          kind === 's'
            ? { kind: 'success', durationMs: Number(detail), probe: probe === 1 }
            : { kind: 'failure', reason: String(detail), probe: probe === 1 },
        );
    }
  }
}
