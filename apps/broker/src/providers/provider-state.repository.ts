/**
 * All the SQL of the providers' shared state: each provider's breaker snapshot, disabled flag and last
 * health check, the transition history, the operators' overrides and the breaker leader's lease.
 * Writes a leader makes carry its fence (holder and epoch) and are dropped when another replica
 * took the lease over since (docs/operations.md).
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Subject, type Observable } from 'rxjs';
import type { BreakerSnapshot, BreakerTransition } from '@app/circuit-breaker';
import { DataSource, type EntityManager } from 'typeorm';
import { BreakerTransitionRecord } from './breaker-transition.entity';
import { ProviderStateRecord } from './provider-state.entity';

export interface SavedProviderState {
  snapshot: BreakerSnapshot | null;
  disabled: boolean;
  disabledReason: string | null;
}

/** Who may write the cluster's breaker state: the lease holder of this epoch. */
export interface LeaderFence {
  readonly holder: string;
  readonly epoch: number;
}

export interface LeaseHolder {
  holder: string;
  epoch: number;
  /** False when the lease has run out and nobody renewed it yet. */
  live: boolean;
}

/**
 * The answer to a leader's claim of a health check: it may check now; or it leads no more (`dueInMs` null); or
 * the cluster checked the provider less than the interval ago, and the next check is due in `dueInMs`.
 */
export type HealthCheckClaim = { claimed: true } | { claimed: false; dueInMs: number | null };

/** An operator's request to force a breaker, as the leader takes it. */
interface ClaimedOverride {
  id: string;
  provider: string;
  state: 'OPEN' | 'CLOSED';
  reason: string;
  requestedBy: string;
}

/** Where a request stands: `transitionAt` is when the transition it made happened, once that is recorded. */
type OverrideOutcome = { status: 'pending' | 'withdrawn' } | { status: 'applied'; transitionAt: number | null };

/** Notified with `{ id }` when an operator asks for a breaker to be forced: the leader applies it (BreakerOverrides). */
export const BREAKER_OVERRIDE_CHANNEL = 'broker_breaker_overrides';

/** Notified on every persisted change, so other replicas adopt it (see ProviderStateSync). */
export const PROVIDER_STATE_CHANNEL = 'broker_provider_state';

/** The lease of the replica that runs health checks and decides every provider's breaker. */
export const BREAKER_LEASE = 'breaker-leader';

/** Writes with a transition in its transaction (`manager`): what must commit with it, or not at all (the ops webhook's outbox row). */
export type TransitionWriter = (provider: string, transition: BreakerTransition, manager: EntityManager) => Promise<void>;

/** A transition once its transaction has committed: what `transitions$` tells. */
export interface CommittedTransition {
  readonly provider: string;
  readonly transition: BreakerTransition;
  /** The operator's request the transition applied, if it was forced by one. */
  readonly overrideId: string | null;
}

@Injectable()
export class ProviderStateRepository {
  private readonly committed = new Subject<CommittedTransition>();
  /**
   * Each transition `saveTransition` wrote, once its transaction has committed (never one that was fenced off or
   * failed): what runs after the commit (the wake of the delivery workers) listens here.
   */
  readonly transitions$: Observable<CommittedTransition> = this.committed.asObservable();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async loadAll(): Promise<Map<string, SavedProviderState>> {
    const rows = await this.dataSource.getRepository(ProviderStateRecord).find();
    return new Map(rows.map((row) => [row.provider, toSaved(row)]));
  }

  async load(provider: string): Promise<SavedProviderState | undefined> {
    const row = await this.dataSource.getRepository(ProviderStateRecord).findOne({ where: { provider } });
    return row ? toSaved(row) : undefined;
  }

  /**
   * One transition, its snapshot, what `writers` write with it, and a NOTIFY, in one transaction; once it has
   * committed, the transition goes out on `transitions$`. With a fence, nothing is written (false) unless the fence
   * still holds the lease. `overrideId`: the operator's request a forced transition applied.
   */
  async saveTransition(
    provider: string,
    transition: BreakerTransition,
    snapshot: BreakerSnapshot,
    fence: LeaderFence | null,
    notice: string,
    writers: readonly TransitionWriter[],
    overrideId: string | null = null,
  ): Promise<boolean> {
    const written = await this.dataSource.transaction(async (manager) => {
      if (fence && !(await holdsLease(manager, fence))) return false;
      await manager.getRepository(BreakerTransitionRecord).insert({
        provider,
        from: transition.from,
        to: transition.to,
        reason: transition.reason,
        lastError: transition.lastError,
        at: new Date(transition.at),
        forcedBy: transition.forcedBy,
        overrideId,
      });
      await upsertSnapshot(manager, provider, snapshot);
      for (const write of writers) await write(provider, transition, manager);
      await notify(manager, notice);
      return true;
    });
    if (written) this.committed.next({ provider, transition, overrideId });
    return written;
  }

  /**
   * Claims the provider's next health check for the leader holding `fence`: granted when the cluster's last
   * claimed check of it (by the database's clock) is at least `minGapMs` old, and then stamped as the last,
   * so a new leader right after a takeover cannot check again within the interval (docs/operations.md).
   * Without a fence (a replica that believes itself cut off, deciding alone) only the gap is asked: one whose
   * lease claim merely came late still finds the leader's last check and keeps out of its interval.
   */
  async claimHealthCheck(provider: string, fence: LeaderFence | null, minGapMs: number): Promise<HealthCheckClaim> {
    return this.dataSource.transaction(async (manager): Promise<HealthCheckClaim> => {
      if (fence && !(await holdsLease(manager, fence))) return { claimed: false, dueInMs: null };
      const claimed: unknown[] = await manager.query(
        // clock_timestamp(), not now(): the stamp is when the row is claimed (after its lock), not when a
        // transaction that waited began, so the next claim's gap is measured from as close to the check as can be.
        `INSERT INTO provider_states (provider, snapshot, disabled, last_check_at, updated_at) VALUES ($1, NULL, false, clock_timestamp(), now())
         ON CONFLICT (provider) DO UPDATE SET last_check_at = clock_timestamp()
         WHERE provider_states.last_check_at IS NULL OR provider_states.last_check_at <= clock_timestamp() - $2 * interval '1 millisecond'
         RETURNING provider`,
        [provider, minGapMs],
      );
      if (claimed.length === 1) return { claimed: true };
      const [due]: Array<{ ms: number }> = await manager.query(
        `SELECT greatest(0, extract(epoch FROM last_check_at + $2 * interval '1 millisecond' - clock_timestamp()) * 1000)::float8 AS ms
           FROM provider_states WHERE provider = $1`,
        [provider, minGapMs],
      );
      return { claimed: false, dueInMs: Math.ceil(due.ms) };
    });
  }

  /** The leader's snapshot between transitions (a health check's count), fenced and announced. */
  async saveSnapshot(provider: string, snapshot: BreakerSnapshot, fence: LeaderFence, notice: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await holdsLease(manager, fence))) return false;
      await upsertSnapshot(manager, provider, snapshot);
      await notify(manager, notice);
      return true;
    });
  }

  async saveDisabled(provider: string, disabled: boolean, reason: string | null, notice: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO provider_states (provider, snapshot, disabled, disabled_reason, updated_at) VALUES ($1, NULL, $2, $3, now())
         ON CONFLICT (provider) DO UPDATE SET disabled = EXCLUDED.disabled, disabled_reason = EXCLUDED.disabled_reason, updated_at = now()`,
        [provider, disabled, reason],
      );
      await notify(manager, notice);
    });
  }

  /** Records an operator's request to force a breaker and announces it to the leader, in one transaction; answers its id. */
  async requestOverride(provider: string, state: 'OPEN' | 'CLOSED', reason: string, requestedBy: string): Promise<string> {
    return this.dataSource.transaction(async (manager) => {
      const [row]: Array<{ id: string }> = await manager.query(
        `INSERT INTO breaker_overrides (provider, state, reason, requested_by) VALUES ($1, $2, $3, $4) RETURNING id`,
        [provider, state, reason, requestedBy],
      );
      await manager.query('SELECT pg_notify($1, $2)', [BREAKER_OVERRIDE_CHANNEL, JSON.stringify({ id: String(row.id) })]);
      return String(row.id);
    });
  }

  /**
   * Takes for the leader holding `fence` the pending requests of `providers` made less than `maxAgeMs` ago by the
   * database's clock (the one `id`, or every one), oldest first, marking them applied by `replica`; older pending
   * ones are withdrawn (the replica that asked has stopped waiting). Nothing while the fence no longer holds the lease.
   */
  async claimOverrides(
    fence: LeaderFence,
    replica: string,
    providers: readonly string[],
    maxAgeMs: number,
    id?: string,
  ): Promise<ClaimedOverride[]> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await holdsLease(manager, fence))) return [];
      await manager.query(
        `UPDATE breaker_overrides SET status = 'withdrawn', decided_at = now()
          WHERE status = 'pending' AND requested_at <= now() - $1 * interval '1 millisecond'`,
        [maxAgeMs],
      );
      // An UPDATE … RETURNING answers [rows, count] through TypeORM's postgres driver.
      const [rows]: [Array<{ id: string; provider: string; state: 'OPEN' | 'CLOSED'; reason: string; requested_by: string }>, number] =
        await manager.query(
          `UPDATE breaker_overrides SET status = 'applied', decided_at = now(), applied_by = $1
          WHERE id IN (SELECT id FROM breaker_overrides
                        WHERE status = 'pending' AND provider = ANY($2::text[]) AND ($3::bigint IS NULL OR id = $3::bigint)
                        ORDER BY id FOR UPDATE)
          RETURNING id, provider, state, reason, requested_by`,
          [replica, providers, id ?? null],
        );
      return rows
        .map((r) => ({ id: String(r.id), provider: r.provider, state: r.state, reason: r.reason, requestedBy: r.requested_by }))
        .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    });
  }

  async overrideOutcome(id: string): Promise<OverrideOutcome> {
    const [row]: Array<{ status: 'pending' | 'applied' | 'withdrawn'; at: Date | null }> = await this.dataSource.query(
      `SELECT o.status, t.at FROM breaker_overrides o LEFT JOIN breaker_transitions t ON t.override_id = o.id WHERE o.id = $1`,
      [id],
    );
    if (row.status !== 'applied') return { status: row.status };
    return { status: 'applied', transitionAt: row.at ? row.at.getTime() : null };
  }

  /** Withdraws a request no leader has taken yet; false when one has (it is applied). */
  async withdrawOverride(id: string): Promise<boolean> {
    const [, withdrawn]: [unknown[], number] = await this.dataSource.query(
      `UPDATE breaker_overrides SET status = 'withdrawn', decided_at = now() WHERE id = $1 AND status = 'pending'`,
      [id],
    );
    return withdrawn === 1;
  }

  async history(provider: string | undefined, limit: number, before?: string): Promise<BreakerTransitionRecord[]> {
    const query = this.dataSource.getRepository(BreakerTransitionRecord).createQueryBuilder('t').orderBy('t.id', 'DESC').limit(limit);
    if (provider) query.andWhere('t.provider = :provider', { provider });
    if (before) query.andWhere('t.id < :before', { before });
    return query.getMany();
  }

  /**
   * Takes the lease for `ttlMs` if it is free, has run out, or is ours already (a renewal); another
   * holder's epoch + 1 on a takeover. Answers the holder afterwards, whoever it is.
   */
  async claimLease(name: string, holder: string, ttlMs: number): Promise<LeaseHolder> {
    const rows: Array<{ holder: string; epoch: string; live: boolean }> = await this.dataSource.query(
      `WITH claimed AS (
         INSERT INTO cluster_leases (name, holder, epoch, expires_at) VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
         ON CONFLICT (name) DO UPDATE SET
           holder = EXCLUDED.holder,
           epoch = CASE WHEN cluster_leases.holder = EXCLUDED.holder THEN cluster_leases.epoch ELSE cluster_leases.epoch + 1 END,
           expires_at = EXCLUDED.expires_at
         WHERE cluster_leases.holder = EXCLUDED.holder OR cluster_leases.expires_at <= now()
         RETURNING holder, epoch, true AS live)
       SELECT holder, epoch, live FROM claimed
       UNION ALL
       SELECT holder, epoch, expires_at > now() FROM cluster_leases WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM claimed)`,
      [name, holder, ttlMs],
    );
    const row = rows[0];
    return { holder: row.holder, epoch: Number(row.epoch), live: row.live };
  }

  /** Gives the lease up (a clean shutdown), so another replica need not wait for it to run out. */
  async releaseLease(name: string, holder: string): Promise<void> {
    await this.dataSource.query(`UPDATE cluster_leases SET expires_at = now() WHERE name = $1 AND holder = $2`, [name, holder]);
  }

  /** A NOTIFY on `channel`, outside any transaction (the followers' outcome batches). */
  async notify(channel: string, payload: string): Promise<void> {
    await this.dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }
}

/**
 * Locks the lease row against a takeover until the write commits, so no write of a former leader lands after one.
 * A session rescue's move checks it too, last before its commit (apps/broker/src/rescue).
 */
export async function holdsLease(manager: EntityManager, fence: LeaderFence): Promise<boolean> {
  const rows: unknown[] = await manager.query(
    `SELECT 1 FROM cluster_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > now() FOR SHARE`,
    [BREAKER_LEASE, fence.holder, fence.epoch],
  );
  return rows.length === 1;
}

async function upsertSnapshot(manager: EntityManager, provider: string, snapshot: BreakerSnapshot): Promise<void> {
  await manager.query(
    `INSERT INTO provider_states (provider, snapshot, disabled, updated_at) VALUES ($1, $2, false, now())
     ON CONFLICT (provider) DO UPDATE SET snapshot = EXCLUDED.snapshot, updated_at = now()`,
    [provider, JSON.stringify(snapshot)],
  );
}

async function notify(manager: EntityManager, notice: string): Promise<void> {
  await manager.query('SELECT pg_notify($1, $2)', [PROVIDER_STATE_CHANNEL, notice]);
}

function toSaved(row: ProviderStateRecord): SavedProviderState {
  return { snapshot: (row.snapshot as BreakerSnapshot | null) ?? null, disabled: row.disabled, disabledReason: row.disabledReason };
}
