import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { JOB_LOCKS } from '../database/exclusive';
import { ProxyNumberRepository } from '../numbers/proxy-number.repository';

export interface ProviderPoolUsage {
  /** Active sessions on the provider. */
  activeSessions: number;
  /** The same by the channels they carry: `voice`, `sms`, `voice+sms`. */
  activeSessionsByChannels: Record<string, number>;
  /**
   * `voice`, `sms`: enabled numbers that carry each channel. `quarantineSeconds`: SESSION_NUMBER_QUARANTINE_SECONDS, how long
   * after a session ends its number takes neither participant with anyone else (docs/design.md#number-quarantine).
   */
  pool: { total: number; enabled: number; inUse: number; voice: number; sms: number; quarantineSeconds: number };
}

/**
 * Active sessions and pool use per provider, and the load of each proxy number, read from the
 * database every POOL_USAGE_REFRESH_MS (default 5 s) and kept in memory (counts kept with the sessions, migration
 * PoolUsageCounts: the read costs the pool's size, not the active sessions): GET /v1/health/cpaas shows them without touching
 * the database, and the allocator orders numbers least loaded first without counting sessions on
 * every create. Between two reads this replica adds its own reservations to the counts.
 */
@Injectable()
export class PoolUsage implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PoolUsage.name);
  private usage = new Map<string, ProviderPoolUsage>();
  /**
   * Active sessions per proxy number id, by provider, as of the last read plus this replica's reservations since. Kept
   * apart per provider: a reservation ranks only its provider's numbers, and each number of the pool is compared with
   * the load order it is sent (broker_reserve_session's `array_position`), so another provider's ids there cost every
   * create without ever matching.
   */
  private load = new Map<string, LoadOrder>();
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly repository: ProxyNumberRepository,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.refresh();
    const every = this.config.sessions.poolUsageRefreshMs;
    // Read at start only: the load changes the creates write are still folded into the totals, on the sweeper's
    // cadence, so they do not pile up (ProxyNumberRepository.foldPoolLoad).
    this.timer =
      every === 0
        ? setInterval(() => void this.fold(), this.config.sessions.sweepIntervalMs)
        : setInterval(() => void this.refresh(), every);
    this.timer.unref();
  }

  private fold(): Promise<void> {
    this.refreshing ??= this.repository
      .foldPoolLoad(JOB_LOCKS.poolUsageFold)
      .catch((error: unknown) => this.logger.warn(`pool load not folded: ${(error as Error).message}`))
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.refreshing;
  }

  of(provider: string): ProviderPoolUsage {
    return this.usage.get(provider) ?? this.empty();
  }

  private empty(): ProviderPoolUsage {
    const quarantineSeconds = this.config.sessions.numberQuarantineSeconds;
    return {
      activeSessions: 0,
      activeSessionsByChannels: {},
      pool: { total: 0, enabled: 0, inUse: 0, voice: 0, sms: 0, quarantineSeconds },
    };
  }

  /** Ids of the provider's numbers carrying sessions, least loaded first; a number not listed carries none. */
  loadOrder(provider: string): string[] {
    return this.load.get(provider)?.ids() ?? [];
  }

  noteReserved(provider: string, proxyNumberId: string): void {
    let order = this.load.get(provider);
    if (!order) this.load.set(provider, (order = new LoadOrder()));
    order.add(proxyNumberId);
  }

  refresh(): Promise<void> {
    this.refreshing ??= this.read()
      .catch((error: unknown) => this.logger.warn(`pool usage not refreshed: ${(error as Error).message}`))
      .finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const { numbers, perNumber, perChannels } = await this.repository.poolUsage(JOB_LOCKS.poolUsageFold);
    const usage = new Map<string, ProviderPoolUsage>();
    for (const n of numbers)
      usage.set(n.provider, {
        activeSessions: 0,
        activeSessionsByChannels: {},
        pool: { ...this.empty().pool, total: n.total, enabled: n.enabled, voice: n.voice, sms: n.sms },
      });
    const loads = new Map<string, Array<[string, number]>>();
    for (const row of perNumber) {
      const ofProvider = loads.get(row.provider) ?? [];
      ofProvider.push([row.proxy_number_id, row.active]);
      loads.set(row.provider, ofProvider);
      const entry = usage.get(row.provider) ?? this.empty();
      usage.set(row.provider, {
        ...entry,
        activeSessions: entry.activeSessions + row.active,
        pool: { ...entry.pool, inUse: entry.pool.inUse + 1 },
      });
    }
    for (const row of perChannels) {
      const entry = usage.get(row.provider) ?? this.empty();
      usage.set(row.provider, { ...entry, activeSessionsByChannels: { ...entry.activeSessionsByChannels, [row.channels]: row.active } });
    }
    this.usage = usage;
    this.load = new Map([...loads].map(([provider, ofProvider]) => [provider, new LoadOrder(ofProvider)]));
  }
}

/**
 * Sessions per proxy number id, kept in the order the allocator asks for: least loaded first, equal loads
 * in the order the ids were first counted (what a stable sort of a Map's entries by load gives). A
 * reservation moves one id by one place in load instead of sorting every id on every create.
 */
export class LoadOrder {
  /** Ids by (load, first counted). */
  private readonly order: string[];
  private readonly entries = new Map<string, { load: number; seq: number }>();
  private nextSeq = 0;

  /** Starts from a read of the database: each id once, with its sessions. */
  constructor(loads: Iterable<readonly [string, number]> = []) {
    for (const [id, load] of loads) {
      const known = this.entries.get(id);
      if (known) known.load = load;
      else this.entries.set(id, { load, seq: this.nextSeq++ });
    }
    this.order = [...this.entries.keys()];
    // Sorted once here; stable, so equal loads keep the order of the read.
    this.order.sort((a, b) => this.entries.get(a)!.load - this.entries.get(b)!.load);
  }

  /** One more session on `id`: it moves to its new place (a new id comes last among the ones with its load). */
  add(id: string): void {
    let entry = this.entries.get(id);
    if (entry) this.order.splice(this.indexOf(entry), 1);
    else this.entries.set(id, (entry = { load: 0, seq: this.nextSeq++ }));
    entry.load += 1;
    this.order.splice(this.insertionPoint(entry), 0, id);
  }

  /** The ids, least loaded first: a copy, as the caller hands it on. */
  ids(): string[] {
    return this.order.slice();
  }

  /** Where `entry` is in the order (it is there). */
  private indexOf(entry: { load: number; seq: number }): number {
    return this.insertionPoint(entry) - 1;
  }

  /** The first index whose entry sorts after `entry`. */
  private insertionPoint(entry: { load: number; seq: number }): number {
    let low = 0;
    let high = this.order.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const other = this.entries.get(this.order[mid])!;
      if (other.load < entry.load || (other.load === entry.load && other.seq <= entry.seq)) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
