/**
 * The delivery worker of one replica. A cycle (on start, every WEBHOOK_POLL_INTERVAL_MS, and whenever a
 * NOTIFY says a delivery was recorded for an endpoint it is not already working on) gives up expired
 * deliveries, holds back those of blocked endpoints, and acquires endpoints with due deliveries, starting
 * an `EndpointLane` for each. A heartbeat renews the leases of the endpoints it owns.
 *
 * No NestJS here: `DeliveryWorkerService` runs it in the app; tests drive it directly (`runOnce`,
 * `whenIdle`) with a clock they move by hand, and its pacing timers on a scheduler they move (`scheduler`).
 */
import { randomUUID } from 'node:crypto';
import { asyncScheduler, interval, type SchedulerLike, type Subscription } from 'rxjs';
import type { ChannelListener } from '../../database/listen-client';
import type { Clock } from '@app/clock';
import { DELIVERY_CHANNEL, type AcquiredEndpoint, type DeliveryStore, type EndpointKey } from './delivery-store';
import { EndpointLane, type DeliveryPreparer, type LaneEnd, type LaneLogger, type LaneSettings } from './endpoint-lane';
import type { WebhookSender } from './webhook-sender';

/** Endpoints one replica works on at once (each with up to `maxInFlight` attempts). */
const MAX_ENDPOINTS_PER_REPLICA = 64;

export interface WorkerSettings extends LaneSettings {
  readonly pollIntervalMs: number;
}

export interface WorkerLogger extends LaneLogger {
  log(message: string): void;
}

interface DeliveryWorkerDeps {
  readonly store: DeliveryStore;
  readonly sender: WebhookSender;
  readonly preparer: DeliveryPreparer;
  readonly clock: Clock;
  readonly settings: WorkerSettings;
  readonly logger: WorkerLogger;
  readonly random?: () => number;
  /** The replica's LISTEN connection (it reconnects by itself); without it the worker relies on polling. */
  readonly listener?: ChannelListener;
  /**
   * Runs the pacing timers (poll, lease heartbeat, and each lane's outcome flush and linger); rxjs's
   * `asyncScheduler` unless given: a test passes a `VirtualTimeScheduler` and moves them without waiting.
   */
  readonly scheduler?: SchedulerLike;
}

/** A lane's name in this replica's map: the same endpoint, the same name. */
const laneName = (key: EndpointKey): string => `${key.accountId ?? 'ops'} ${key.url}`;

export class DeliveryWorker {
  /** This replica's name in `webhook_endpoints.owner`. */
  readonly owner = `worker-${randomUUID()}`;
  private readonly store: DeliveryStore;
  private readonly lanes = new Map<string, EndpointLane>();
  /**
   * Endpoints whose lane failed with the database (a failover): their release may not have reached it, so
   * they may still be leased to this replica, which no longer works on them. The next cycle lets go of them.
   * By lane name, the endpoint row's id.
   */
  private readonly unreleased = new Map<string, string>();
  private readonly idleWaiters: Array<() => void> = [];
  private cycles: Promise<void> | null = null;
  private cycleWanted = false;
  private readonly scheduler: SchedulerLike;
  private pollTimer: Subscription | null = null;
  private heartbeatTimer: Subscription | null = null;
  private unlisten: (() => void) | null = null;
  private running = false;
  private stopped = false;

  constructor(private readonly deps: DeliveryWorkerDeps) {
    this.store = deps.store;
    this.scheduler = deps.scheduler ?? asyncScheduler;
  }

  /** Starts polling, listening and the lease heartbeat. */
  async start(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    const listener = this.deps.listener;
    if (listener) {
      const unsubscribe = listener.subscribe(DELIVERY_CHANNEL, (url) => this.onRecorded(url));
      // Deliveries recorded while the connection was down were announced to nobody.
      const unwatch = listener.onReconnect(() => void this.runOnce());
      this.unlisten = () => (unsubscribe(), unwatch());
    }
    this.schedulePoll();
    const heartbeatMs = Math.max(50, Math.floor(this.deps.settings.leaseMs / 3));
    this.heartbeatTimer = interval(heartbeatMs, this.scheduler).subscribe(() => void this.heartbeat());
    void this.runOnce();
  }

  /** Stops cycles and timers, aborts attempts in flight, writes what is done and releases every endpoint. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.pollTimer?.unsubscribe();
    this.heartbeatTimer?.unsubscribe();
    this.pollTimer = this.heartbeatTimer = null;
    await this.cycles;
    await Promise.all([...this.lanes.values()].map((lane) => lane.stop()));
    this.unlisten?.();
    this.unlisten = null;
  }

  /** Runs one cycle (or joins the next one): resolves once a cycle that started after this call is done. */
  runOnce(): Promise<void> {
    this.cycleWanted = true;
    if (!this.cycles) {
      const run: Promise<void> = this.runCycles().finally(() => {
        if (this.cycles === run) this.cycles = null;
        this.notifyIfIdle();
      });
      this.cycles = run;
    }
    return this.cycles;
  }

  /** Resolves when no lane is running (tests: after `runOnce`, wait for the sends it started). */
  whenIdle(): Promise<void> {
    if (this.lanes.size === 0 && !this.cycles) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Endpoints this replica is working on. */
  activeEndpoints(): EndpointKey[] {
    return [...this.lanes.values()].map((lane) => lane.key);
  }

  private async runCycles(): Promise<void> {
    while (this.cycleWanted && !this.stopped) {
      this.cycleWanted = false;
      try {
        await this.cycle();
      } catch (error) {
        this.deps.logger.warn(`webhook delivery cycle failed: ${(error as Error).message}`);
      }
    }
  }

  private async cycle(): Promise<void> {
    if (this.unreleased.size > 0) {
      const idle = [...this.unreleased].filter(([name]) => !this.lanes.has(name));
      await this.store.releaseUnworked(
        idle.map(([, id]) => id),
        this.owner,
      );
      for (const [name] of idle) this.unreleased.delete(name);
    }
    const now = this.deps.clock.now();
    const givenUp = await this.store.giveUpExpired(now);
    if (givenUp > 0) this.deps.logger.log(`gave up ${givenUp} webhook deliveries not delivered within their lifetime`);
    await this.store.holdBlocked(now);
    const room = MAX_ENDPOINTS_PER_REPLICA - this.lanes.size;
    if (room <= 0) return;
    const due = (await this.store.dueEndpoints(now, room)).filter((key) => !this.lanes.has(laneName(key)));
    if (due.length === 0 || this.stopped) return;
    const acquired = await this.store.acquire(due, this.owner, now, now + this.deps.settings.leaseMs, room);
    for (const endpoint of acquired) this.startLane(endpoint);
  }

  private startLane(endpoint: AcquiredEndpoint): void {
    const lane = new EndpointLane(endpoint, {
      store: this.store,
      sender: this.deps.sender,
      preparer: this.deps.preparer,
      clock: this.deps.clock,
      random: this.deps.random ?? Math.random,
      settings: this.deps.settings,
      owner: this.owner,
      logger: this.deps.logger,
      scheduler: this.scheduler,
    });
    const name = laneName(endpoint);
    this.lanes.set(name, lane);
    void lane.done.then((end: LaneEnd) => {
      this.lanes.delete(name);
      if (end === 'failed') this.unreleased.set(name, endpoint.id);
      // Something may have been recorded for it while it was finishing; a failed lane waits for the next
      // cycle (the LISTEN connection coming back, a NOTIFY, the poll).
      if (end === 'idle' && !this.stopped) void this.runOnce();
      this.notifyIfIdle();
    });
    lane.start();
    if (this.stopped) void lane.stop();
  }

  private notifyIfIdle(): void {
    if (this.lanes.size > 0 || this.cycles) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * A delivery to `url` was recorded. The NOTIFY names the URL, not whose it is: this replica's lanes for that
   * URL are poked, and only with none is a cycle run (a steady stream stays one lane's, with no cycle per event).
   * A delivery for another account's endpoint on a URL a lane here works on waits for the poll, at most
   * WEBHOOK_POLL_INTERVAL_MS, or for that lane to end.
   */
  private onRecorded(url: string): void {
    if (this.stopped) return;
    let poked = false;
    for (const lane of this.lanes.values())
      if (lane.url === url) {
        lane.poke();
        poked = true;
      }
    if (!poked) void this.runOnce();
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    this.pollTimer = this.scheduler.schedule(() => {
      void this.runOnce().finally(() => this.schedulePoll());
    }, this.deps.settings.pollIntervalMs);
  }

  private async heartbeat(): Promise<void> {
    if (this.lanes.size === 0 || this.stopped) return;
    const now = this.deps.clock.now();
    try {
      // Only the endpoints a lane works on: an unreleased one must run out, not be kept.
      await this.store.renewLeases(
        this.owner,
        now + this.deps.settings.leaseMs,
        [...this.lanes.values()].map((lane) => lane.endpointId),
      );
    } catch (error) {
      this.deps.logger.warn(`could not renew webhook endpoint leases: ${(error as Error).message}`);
    }
  }
}
