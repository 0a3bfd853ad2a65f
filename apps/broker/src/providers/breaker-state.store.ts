import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { BreakerSnapshot, BreakerTransition } from '@app/circuit-breaker';
import { DataSource } from 'typeorm';
import { BreakerTransitionRecord } from './breaker-transition.entity';
import { ProviderStateRecord } from './provider-state.entity';

export interface SavedProviderState {
  snapshot: BreakerSnapshot | null;
  disabled: boolean;
  disabledReason: string | null;
}

/** Notified on every persisted change, so other replicas adopt it (see ProviderStateSync). */
export const PROVIDER_STATE_CHANNEL = 'broker_provider_state';

/**
 * Persists each provider's breaker transitions (the history ops read) and its latest snapshot and
 * disabled flag (restored at start). Writes for one provider happen in the order the transitions
 * happened; a failed write is logged and never takes the breaker down.
 */
@Injectable()
export class BreakerStateStore {
  private readonly logger = new Logger(BreakerStateStore.name);
  private queue: Promise<void> = Promise.resolve();
  /** Identifies this process in notifications, so it ignores its own. */
  readonly origin = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  private readonly afterTransition: Array<
    (provider: string, transition: BreakerTransition, manager: import('typeorm').EntityManager) => Promise<void>
  > = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Lets another module write in the same transaction as a transition (the ops webhook outbox). */
  onTransition(hook: (provider: string, transition: BreakerTransition, manager: import('typeorm').EntityManager) => Promise<void>): void {
    this.afterTransition.push(hook);
  }

  async loadAll(): Promise<Map<string, SavedProviderState>> {
    const rows = await this.dataSource.getRepository(ProviderStateRecord).find();
    return new Map(rows.map((row) => [row.provider, toSaved(row)]));
  }

  async load(provider: string): Promise<SavedProviderState | undefined> {
    const row = await this.dataSource.getRepository(ProviderStateRecord).findOne({ where: { provider } });
    return row ? toSaved(row) : undefined;
  }

  recordTransition(provider: string, transition: BreakerTransition, snapshot: BreakerSnapshot): void {
    this.enqueue(`transition of ${provider}`, () =>
      this.dataSource.transaction(async (manager) => {
        await manager.getRepository(BreakerTransitionRecord).insert({
          provider,
          from: transition.from,
          to: transition.to,
          reason: transition.reason,
          lastError: transition.lastError,
          at: new Date(transition.at),
        });
        await manager.query(
          `INSERT INTO provider_states (provider, snapshot, disabled, updated_at) VALUES ($1, $2, false, now())
           ON CONFLICT (provider) DO UPDATE SET snapshot = EXCLUDED.snapshot, updated_at = now()`,
          [provider, JSON.stringify(snapshot)],
        );
        for (const hook of this.afterTransition) await hook(provider, transition, manager);
        await manager.query('SELECT pg_notify($1, $2)', [PROVIDER_STATE_CHANNEL, JSON.stringify({ provider, origin: this.origin })]);
      }),
    );
  }

  async saveDisabled(provider: string, disabled: boolean, reason: string | null): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO provider_states (provider, snapshot, disabled, disabled_reason, updated_at) VALUES ($1, NULL, $2, $3, now())
         ON CONFLICT (provider) DO UPDATE SET disabled = EXCLUDED.disabled, disabled_reason = EXCLUDED.disabled_reason, updated_at = now()`,
        [provider, disabled, reason],
      );
      await manager.query('SELECT pg_notify($1, $2)', [PROVIDER_STATE_CHANNEL, JSON.stringify({ provider, origin: this.origin })]);
    });
  }

  async history(provider: string | undefined, limit: number, before?: string): Promise<BreakerTransitionRecord[]> {
    const query = this.dataSource.getRepository(BreakerTransitionRecord).createQueryBuilder('t').orderBy('t.id', 'DESC').limit(limit);
    if (provider) query.andWhere('t.provider = :provider', { provider });
    if (before) query.andWhere('t.id < :before', { before });
    return query.getMany();
  }

  /** Waits for the writes already queued (shutdown, tests). */
  flush(): Promise<void> {
    return this.queue;
  }

  private enqueue(what: string, write: () => Promise<void>): void {
    this.queue = this.queue.then(write).catch((error: unknown) => this.logger.error({ err: error }, `could not persist the ${what}`));
  }
}

function toSaved(row: ProviderStateRecord): SavedProviderState {
  return { snapshot: (row.snapshot as BreakerSnapshot | null) ?? null, disabled: row.disabled, disabledReason: row.disabledReason };
}
