/**
 * Which replica decides the providers' breakers (docs/operations.md). Every replica claims the breaker lease in
 * PostgreSQL a quarter of a lease after its last claim ended: the holder renews it, the others take
 * it over once it has run out (a dead leader is replaced within 1¼ leases, the lease being at most a
 * health interval). A claim that fails or does not answer within half a lease stops this replica
 * leading at once (¾ of a lease at most after its last renewal, before the lease can run out
 * elsewhere). Two in a row mean it cannot reach the database: it decides on its own breakers ("scope":
 * "replica") until a claim succeeds again. One alone (an answer late on a loaded machine, a connection
 * lost once) leaves it in the cluster: deciding alone, and then taking the cluster's state whole on
 * rejoining, would cost a follower the live counts it kept meanwhile.
 */
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { ListenClient } from '../../database/listen-client';
import { BREAKER_LEASE, ProviderStateRepository, type LeaderFence } from '../provider-state.repository';

export type BreakerScope = 'cluster' | 'replica';

export interface Leadership {
  /** `cluster`: this replica follows the cluster's breakers; `replica`: it cannot reach the database and decides alone. */
  scope: BreakerScope;
  /** The replica holding the lease, as last seen (null: none, or not known while cut off). */
  leader: string | null;
  /** This replica's fence while it leads, else null. */
  fence: LeaderFence | null;
}

const CUT_OFF: Leadership = { scope: 'replica', leader: null, fence: null };

@Injectable()
export class BreakerLeadership implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(BreakerLeadership.name);
  /** This replica's name in the lease and on the health page. */
  readonly replica = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 6)}`;
  private readonly subject = new BehaviorSubject<Leadership>(CUT_OFF);
  /** Every change of scope, leader or term. */
  readonly changes$: Observable<Leadership> = this.subject.pipe(
    distinctUntilChanged((a, b) => a.scope === b.scope && a.leader === b.leader && a.fence?.epoch === b.fence?.epoch),
  );
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | null = null;
  private claiming: Promise<void> | null = null;
  private reachable = false;
  /** Lease claims in a row that failed or did not answer in time. */
  private failedClaims = 0;
  private stopped = false;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly repository: ProviderStateRepository,
    private readonly listener: ListenClient,
  ) {
    this.leaseMs = config.breaker.leaderLeaseMs;
  }

  get current(): Leadership {
    return this.subject.value;
  }

  /** True when this replica's breakers decide: it leads, or it is cut off from the cluster. */
  get decidesHere(): boolean {
    const now = this.subject.value;
    return now.fence !== null || now.scope === 'replica';
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.listener.start();
    this.listener.connected$.subscribe(() => this.publish());
    await this.claim();
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.claiming;
    const fence = this.subject.value.fence;
    this.subject.next(CUT_OFF);
    this.subject.complete();
    // Hand over at once rather than after the lease runs out.
    if (fence) await this.repository.releaseLease(BREAKER_LEASE, this.replica).catch(() => undefined);
  }

  /** Something else found the database unreachable (a NOTIFY that failed): stop leading until the next claim. */
  noteUnreachable(): void {
    if (!this.reachable) return;
    this.reachable = false;
    this.publish(null, null);
  }

  /** One claim of the lease; public so tests can drive a round. */
  claim(): Promise<void> {
    this.claiming ??= this.claimOnce().finally(() => (this.claiming = null));
    return this.claiming;
  }

  private async claimOnce(): Promise<void> {
    if (this.stopped) return;
    let timeout: NodeJS.Timeout | undefined;
    try {
      const holder = await Promise.race([
        this.repository.claimLease(BREAKER_LEASE, this.replica, this.leaseMs),
        new Promise<never>((_, reject) => {
          timeout = setTimeout(() => reject(new Error(`no answer within ${this.claimTimeoutMs()} ms`)), this.claimTimeoutMs());
        }),
      ]);
      if (this.stopped) return;
      this.reachable = true;
      this.failedClaims = 0;
      const leads = holder.holder === this.replica;
      this.publish(holder.live ? holder.holder : null, leads ? { holder: this.replica, epoch: holder.epoch } : null);
    } catch (error) {
      this.failedClaims += 1;
      if (this.failedClaims < 2 && this.reachable) {
        if (this.subject.value.fence) this.logger.warn(`breaker lease not renewed: ${(error as Error).message}; no longer leading`);
        this.publish(this.subject.value.leader, null);
        return;
      }
      if (this.reachable || this.subject.value.fence)
        this.logger.warn(`breaker lease not claimed twice in a row: ${(error as Error).message}; deciding alone`);
      this.reachable = false;
      this.publish(null, null);
    } finally {
      clearTimeout(timeout);
    }
  }

  private publish(leader: string | null = this.subject.value.leader, fence: LeaderFence | null = this.subject.value.fence): void {
    if (this.stopped) return;
    const scope: BreakerScope = this.reachable && this.listener.connected ? 'cluster' : 'replica';
    const before = this.subject.value;
    const next: Leadership = { scope, leader: scope === 'cluster' ? leader : null, fence: scope === 'cluster' ? fence : null };
    if (next.fence && next.fence.epoch !== before.fence?.epoch)
      this.logger.log(`this replica leads the breakers (term ${next.fence.epoch})`);
    if (before.fence && !next.fence) this.logger.warn('this replica no longer leads the breakers');
    this.subject.next(next);
  }

  private claimTimeoutMs(): number {
    return Math.max(10, Math.floor(this.leaseMs / 2));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.claim().finally(() => this.schedule()), Math.max(5, Math.floor(this.leaseMs / 4)));
    this.timer.unref();
  }
}
