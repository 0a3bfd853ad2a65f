import { Logger } from '@nestjs/common';
import { asyncScheduler, interval, type SchedulerLike, type Subscription } from 'rxjs';
import type { ChannelListener } from '../database/listen-client';
import { DESTINATIONS_CHANNEL, type AccountDestinations, type DestinationRepository } from './destination.repository';
import { countryOf } from './phone-number-check';

/** The fallback re-read of everything, for a notification lost with the LISTEN connection's session. */
const DESTINATION_REFRESH_MS = 30_000;

export interface DestinationView {
  readonly account: AccountDestinations;
  /** Every pool number, with its country (undefined: not a valid number). */
  readonly poolNumbers: ReadonlyMap<string, string | undefined>;
  /** Their countries: the default allowed destinations. */
  readonly poolCountries: ReadonlySet<string>;
}

export interface DestinationCacheOptions {
  readonly refreshMs?: number;
  readonly scheduler?: SchedulerLike;
}

/**
 * The pool's numbers and each account's allowed destinations, in memory, so a create checks its
 * participants without a database round trip (issue #19). Loaded at start; re-read on the
 * broker_destinations NOTIFY that triggers on proxy_numbers and accounts send at commit (this
 * replica and every other one hear it, whoever made the change), in full when the LISTEN
 * connection comes back, and in full every `refreshMs` in case a notification was lost anyway.
 * Bound on staleness: a change is honoured everywhere within one notification's delay (a few ms),
 * at most `refreshMs` (+ one re-read) if the notification was lost. A refusal is never stale: the
 * policy re-reads the account and the pool before refusing, so a widening (or a number added) is
 * honoured at once on every replica; only a narrowing (or a number removed or newly added as a
 * participant) can lag, by the bound above, except on the replica whose admin route made the change
 * (it re-reads the account before answering). Re-reads run one at a time, in order: a read that
 * starts after a notification sees the commit that sent it.
 */
export class DestinationCache {
  private readonly logger = new Logger(DestinationCache.name);
  private readonly accounts = new Map<string, AccountDestinations>();
  /** Each pool number and its country (undefined: not a valid number), as of the last read of the pool. */
  private poolNumbers: ReadonlyMap<string, string | undefined> = new Map();
  private poolCountries: ReadonlySet<string> = new Set();
  private queue: Promise<void> = Promise.resolve();
  private readonly rereads = new Map<string, Promise<void>>();
  private readonly unlisten: Array<() => void> = [];
  private timer: Subscription | null = null;
  private readonly refreshMs: number;
  private readonly scheduler: SchedulerLike;

  constructor(
    private readonly repository: DestinationRepository,
    private readonly listener: ChannelListener,
    options: DestinationCacheOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? DESTINATION_REFRESH_MS;
    this.scheduler = options.scheduler ?? asyncScheduler;
  }

  /** Listens first, then loads: a change committed during the load is heard and re-read after it. */
  async start(): Promise<void> {
    this.unlisten.push(this.listener.subscribe(DESTINATIONS_CHANNEL, (payload) => this.onNotification(payload)));
    this.unlisten.push(this.listener.onReconnect(() => void this.reloadAll('the LISTEN connection came back')));
    await this.enqueue(() => this.loadAll());
    if (this.refreshMs > 0) this.timer = interval(this.refreshMs, this.scheduler).subscribe(() => void this.reloadAll('periodic refresh'));
  }

  /** Nest: loaded before the app listens. */
  onModuleInit(): Promise<void> {
    return this.start();
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  stop(): void {
    this.timer?.unsubscribe();
    this.timer = null;
    for (const off of this.unlisten.splice(0)) off();
  }

  /** What the account's participants are checked against; reads the database only for an account not seen yet. Null: no such account. */
  async view(accountId: string): Promise<DestinationView | null> {
    if (!this.accounts.has(accountId)) await this.enqueue(() => this.loadAccount(accountId));
    return this.current(accountId);
  }

  /** Re-reads the pool and the account before a refusal, then answers from what was read. */
  async reread(accountId: string): Promise<DestinationView | null> {
    // Refusals of one account waiting for the same re-read share it (a flood of 422s queues one per
    // account); one asked for after it started queues another, which sees what committed since.
    let pending = this.rereads.get(accountId);
    if (!pending) {
      pending = this.enqueue(async () => {
        this.rereads.delete(accountId);
        await this.loadPool();
        await this.loadAccount(accountId);
      });
      this.rereads.set(accountId, pending);
    }
    await pending;
    return this.current(accountId);
  }

  /** Resolves when every re-read asked for so far is done. */
  settled(): Promise<void> {
    return this.queue;
  }

  private current(accountId: string): DestinationView | null {
    const account = this.accounts.get(accountId);
    return account ? { account, poolNumbers: this.poolNumbers, poolCountries: this.poolCountries } : null;
  }

  private onNotification(payload: string): void {
    if (payload === 'pool') void this.enqueue(() => this.loadPool()).catch((e: Error) => this.warn('pool', e));
    else if (payload.startsWith('account:')) {
      const id = payload.slice('account:'.length);
      void this.enqueue(() => this.loadAccount(id)).catch((e: Error) => this.warn(`account ${id}`, e));
    }
  }

  private reloadAll(why: string): Promise<void> {
    return this.enqueue(() => this.loadAll()).catch((e: Error) => this.warn(why, e));
  }

  private warn(what: string, error: Error): void {
    this.logger.warn(`allowed destinations not re-read (${what}): ${error.message}; the next notification or refresh retries`);
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async loadAll(): Promise<void> {
    await this.loadPool();
    const all = await this.repository.allAccounts();
    this.accounts.clear();
    for (const [id, account] of all) this.accounts.set(id, account);
  }

  private async loadPool(): Promise<void> {
    const numbers = await this.repository.poolNumbers();
    // A number's country never changes: only numbers new to the pool are parsed (a re-read before each
    // refusal parsed the whole pool again). The map holds exactly the pool's numbers.
    const pool = new Map<string, string | undefined>();
    for (const n of numbers) pool.set(n, this.poolNumbers.has(n) ? this.poolNumbers.get(n) : countryOf(n));
    this.poolNumbers = pool;
    this.poolCountries = new Set([...pool.values()].filter((c): c is string => Boolean(c)));
  }

  private async loadAccount(accountId: string): Promise<void> {
    const account = await this.repository.account(accountId);
    if (account) this.accounts.set(accountId, account);
    else this.accounts.delete(accountId);
  }
}
