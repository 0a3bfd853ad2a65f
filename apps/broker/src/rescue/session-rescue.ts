/**
 * Session rescue (docs/design.md#session-rescue): live conversations leave a provider that stays down.
 * Only the breaker leader does it, every RESCUE_CHECK_INTERVAL_MS:
 *
 * 1. Plan. For each provider whose breaker is OPEN (an outage, named by when it opened), the accounts that opted in
 *    and whose `afterSeconds` has passed on the breakers' clock get a pending move for each of their active sessions
 *    on it (one row per session and outage: never two). Planned once per outage, account and setting; again after a
 *    change of leader or any breaker transition (sessions made on the provider meanwhile).
 * 2. Move, one session at a time, at most RESCUE_MOVES_PER_SECOND, each in one transaction: the first other provider
 *    that admits it (routing order, as a create) with a number free under the pool rule and the participant limit is
 *    asked to bind it where it keeps sessions; the session keeps its id, channels, expiry and metadata; the old number
 *    goes into its history; `session.rebound`; the notice to each participant and the relays that waited are sent
 *    from the new number right after the commit (durable before it). No provider with a free number:
 *    `session.rescue_failed` and the session stays. A provider that failed, or none admitting: tried again later.
 * 3. Release the old bindings once their provider is back.
 *
 * A crash anywhere loses nothing: the rows are the work, a move commits whole or not at all, and the next leader
 * carries on (the lease is checked last in each move's transaction, so a deposed leader's move cannot land).
 */
import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { asyncScheduler, Subscription, type SchedulerLike } from 'rxjs';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { ListenClient } from '../database/listen-client';
import type { IntervalJob } from '../jobs/interval-job';
import { JobRunner } from '../jobs/job-runner';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { BreakerLeadership } from '../providers/cluster/breaker-leadership';
import { PoolUsage } from '../providers/pool-usage';
import { ProviderBreakers } from '../providers/provider-breakers';
import { ProviderRegistry } from '../providers/provider-registry';
import type { LeaderFence } from '../providers/provider-state.repository';
import { RelayService } from '../relay/relay.service';
import { sessionRebound, sessionRescueFailed, type RescueAttempt } from './rescue-events';
import { MovePacer, dueAccounts, openOutages, type Outage, type RescueAccount } from './rescue-rules';
import { RESCUE_SETTINGS_CHANNEL, RescueSettingsRepository } from './rescue-settings.repository';
import { LeadershipLostError, SessionMoveRepository, type OutageKey } from './session-move.repository';

/** The scheduler of the rescue's interval and pace, if not `asyncScheduler` (nothing provides it in the app). */
const RESCUE_SCHEDULER = Symbol('RESCUE_SCHEDULER');

/** Old bindings released per pass at most. */
const RELEASE_BATCH = 50;
/** A move postponed (no provider admitted it, or the one that did failed) waits at most this long before its next try. */
const MAX_RETRY_DELAY_MS = 60_000;

type MoveOutcome = 'none' | 'moved' | 'failed' | 'cancelled' | 'postponed';

/** A move's transaction's outcome, and what to do once it has committed. */
interface Settled {
  readonly outcome: MoveOutcome;
  readonly after?: () => Promise<void>;
}

@Injectable()
export class SessionRescue implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SessionRescue.name);
  private readonly job: IntervalJob;
  private readonly pacer: MovePacer;
  private readonly subscriptions = new Subscription();
  private unlisten: Array<() => void> = [];
  /** Outage, account and setting already planned by this leader. */
  private readonly planned = new Set<string>();
  /**
   * What this replica knows, so a pass with nothing to do sends no query (a provider OPEN while no account opted in
   * costs nothing): the accounts that opted in (null: read again, a setting changed), and whether the database holds
   * pending moves or old bindings to release (null: read again, a new term of leadership began here).
   */
  private accounts: RescueAccount[] | null = null;
  private work: { pending: boolean; unreleased: boolean } | null = null;
  /** Old bindings wait on a provider that was out at the last release: looked for again at the next transition. */
  private unreleasedWhenBack = false;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly moves: SessionMoveRepository,
    private readonly settings: RescueSettingsRepository,
    private readonly registry: ProviderRegistry,
    private readonly breakers: ProviderBreakers,
    private readonly leadership: BreakerLeadership,
    private readonly pool: PoolUsage,
    private readonly relay: RelayService,
    private readonly metrics: BrokerMetrics,
    private readonly listener: ListenClient,
    jobs: JobRunner,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() @Inject(RESCUE_SCHEDULER) private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    this.pacer = new MovePacer(config.rescue.movesPerSecond);
    metrics.sessionRescuePace.set(config.rescue.movesPerSecond);
    // Each series exists from the start, at 0, so a dashboard shows it before the first outage.
    for (const from of registry.names()) {
      for (const to of registry.names()) if (to !== from) metrics.sessionRescues.inc({ from, to, outcome: 'moved' }, 0);
      for (const outcome of ['failed', 'cancelled']) metrics.sessionRescues.inc({ from, to: 'none', outcome }, 0);
    }
    this.job = jobs.job({
      name: SessionRescue.name,
      intervalMs: config.rescue.checkIntervalMs,
      scheduler: this.scheduler,
      // Only the breaker leader (docs/design.md#replicas-and-the-cluster-leader); a replica cut off from the database decides its breakers alone, but moves nothing.
      gate: async (pass) => {
        if (!this.leadership.current.fence) return false;
        await pass();
        return true;
      },
      work: (stopping) => this.pass(stopping),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    // A setting changed on any replica (a trigger on accounts): read again before the next plan.
    this.unlisten.push(this.listener.subscribe(RESCUE_SETTINGS_CHANNEL, () => (this.accounts = null)));
    this.unlisten.push(
      this.listener.onReconnect(() => {
        this.accounts = null;
        this.work = null;
      }),
    );
    let term = this.leadership.current.fence?.epoch ?? null;
    this.subscriptions.add(
      this.leadership.changes$.subscribe((now) => {
        const epoch = now.fence?.epoch ?? null;
        if (epoch === term) return;
        term = epoch;
        // A new term starts from what the database holds: the previous leader's plans and pending moves.
        this.planned.clear();
        this.accounts = null;
        this.work = null;
        if (epoch === null) this.metrics.sessionRescuesPending.set(0);
      }),
    );
    // Sessions made on a provider since it was planned (panic mode), or an outage that ended: planned again.
    this.subscriptions.add(
      this.breakers.transitions$().subscribe(() => {
        this.planned.clear();
        if (this.unreleasedWhenBack && this.work) this.work.unreleased = true;
        this.unreleasedWhenBack = false;
      }),
    );
    // Read once at start, so that a replica with nothing to do queries nothing afterwards.
    await this.readState().catch((error: unknown) =>
      this.logger.warn(`session rescue state not read at start: ${(error as Error).message}`),
    );
    this.job.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriptions.unsubscribe();
    for (const off of this.unlisten.splice(0)) off();
    await this.job.stop();
  }

  /** One pass now (or the one in progress), on the leader only; for tests and ops, which need not wait for the interval. */
  runOnce(): Promise<void> {
    return this.job.runOnce();
  }

  private async pass(stopping: AbortSignal): Promise<void> {
    const fence = this.leadership.current.fence;
    if (!fence) return;
    try {
      const { accounts, work } = await this.readState();
      const outages = this.outages();
      if (outages.length > 0 && accounts.length > 0) await this.plan(outages, accounts, work, fence);
      if (work.pending) await this.moveDue(work, fence, stopping);
      if (work.unreleased) await this.releaseOldBindings(work, stopping);
    } catch (error) {
      if (!(error instanceof LeadershipLostError)) throw error;
      this.logger.warn('session rescue paused: this replica no longer leads the breakers; the next leader carries on');
    }
  }

  /** What is not known (see `accounts` and `work`), read now. */
  private async readState(): Promise<{ accounts: RescueAccount[]; work: { pending: boolean; unreleased: boolean } }> {
    this.accounts ??= await this.settings.optedIn();
    this.work ??= await this.moves.workLeft();
    return { accounts: this.accounts, work: this.work };
  }

  private outages(): Outage[] {
    return openOutages(this.breakers.names().map((name) => ({ name, status: this.breakers.get(name).status() })));
  }

  private async plan(
    outages: readonly Outage[],
    accounts: readonly RescueAccount[],
    work: { pending: boolean },
    fence: LeaderFence,
  ): Promise<void> {
    const breakerNow = this.breakers.now();
    const now = new Date(this.clock.now());
    for (const outage of outages) {
      const due = dueAccounts(outage.openedAt, breakerNow, accounts).filter((a) => !this.planned.has(planKey(outage, a)));
      if (due.length === 0) continue;
      const added = await this.moves.plan(
        keyOf(outage),
        due.map((a) => a.id),
        now,
        fence,
      );
      for (const account of due) this.planned.add(planKey(outage, account));
      if (added === 0) continue;
      work.pending = true;
      this.logger.warn(
        { provider: outage.provider, accounts: due.length, sessions: added },
        `session rescue: ${added} session(s) of ${due.length} account(s) to move off ${outage.provider}, OPEN since ${new Date(outage.openedAt).toISOString()}`,
      );
    }
  }

  /** Settles the moves that are due, one at a time at the configured pace, while this replica leads. */
  private async moveDue(work: { pending: boolean; unreleased: boolean }, fence: LeaderFence, stopping: AbortSignal): Promise<void> {
    const cancelled = await this.moves.cancelEnded(this.outages().map(keyOf), new Date(this.clock.now()), fence);
    for (const row of cancelled) this.metrics.sessionRescues.inc({ from: row.fromProvider, to: 'none', outcome: 'cancelled' });
    while (!stopping.aborted && this.leadership.current.fence?.epoch === fence.epoch) {
      // Only outages some other provider could take sessions from: none admitting, nothing is claimed.
      const outages = this.outages().filter((o) => this.hasAlternative(o.provider));
      if (outages.length === 0) break;
      await this.paced(stopping);
      if (stopping.aborted) break;
      if ((await this.moveOne(outages, work, fence)) === 'none') break;
    }
    const pending = await this.moves.pendingCount();
    this.metrics.sessionRescuesPending.set(pending);
    work.pending = pending > 0;
  }

  /** Whether a provider other than `from` is enabled and not OPEN: one that might admit a session now. */
  private hasAlternative(from: string): boolean {
    return this.breakers
      .names()
      .some((name) => name !== from && !this.breakers.isDisabled(name) && this.breakers.get(name).status().state !== 'OPEN');
  }

  private async moveOne(outages: readonly Outage[], work: { unreleased: boolean }, fence: LeaderFence): Promise<MoveOutcome> {
    const now = new Date(this.clock.now());
    const breakerNow = this.breakers.now();
    // A binding the new provider made, to release should the move not commit.
    const orphan: { on: { provider: string; sessionId: string; proxyNumber: string; bindingId: string } | null } = { on: null };
    let settled: Settled;
    try {
      settled = await this.moves.transaction(async (tx): Promise<Settled> => {
        const claimed = await tx.claimNext(outages.map(keyOf), now);
        if (!claimed) return { outcome: 'none' };
        const { move, session, setting } = claimed;
        const outage = outages.find((o) => o.provider === move.fromProvider)!;
        const cancel = async (reason: string): Promise<Settled> => {
          await tx.settle(move, 'cancelled', reason, now);
          return {
            outcome: 'cancelled',
            after: async () => this.metrics.sessionRescues.inc({ from: move.fromProvider, to: 'none', outcome: 'cancelled' }),
          };
        };
        if (session.status !== 'active' || session.inactiveAt.getTime() <= now.getTime())
          return cancel('the session ended before it was moved');
        if (session.provider !== move.fromProvider || session.proxyNumberId !== move.fromProxyNumberId)
          return cancel(`the session is no longer on ${move.fromProxyNumber} at ${move.fromProvider}`);
        if (setting.afterSeconds === null) return cancel('the account turned rescue off');
        if (dueAccounts(outage.openedAt, breakerNow, [{ id: session.accountId, afterSeconds: setting.afterSeconds }]).length === 0)
          return cancel(`not due any more: the account's afterSeconds is now ${setting.afterSeconds}`);

        const attempts: RescueAttempt[] = [];
        /** Each attempt as a line that names its provider once: a failure's reason line does already. */
        const lines: string[] = [];
        let providerFailed = false;
        for (const candidate of this.registry.rescueCandidates(move.fromProvider)) {
          const provider = candidate.provider.name;
          const number = await tx.takeNumber(session, provider, this.config.sessions.participantLimit, this.pool.loadOrder(provider), now);
          if (!number.taken) {
            const outcome = number.overLimit
              ? `participant limit: the account holds ${number.overLimit.held} active sessions with ${number.overLimit.number} on the shared pool (SESSION_PARTICIPANT_LIMIT=${this.config.sessions.participantLimit})`
              : 'pool exhausted: no proxy number is free for these participants';
            attempts.push({ provider, outcome });
            lines.push(`${provider}: ${outcome}`);
            continue;
          }
          let bindingId: string | null = null;
          if (candidate.provider.keepsSessions) {
            const bound = await this.registry.call(provider, 'bind', candidate.probe, (p) =>
              p.bindProxy({
                sessionId: session.id,
                proxyNumber: number.proxyNumber,
                participants: [session.participants[0], session.participants[1]],
              }),
            );
            if (!bound.ok) {
              await tx.undoNumber();
              attempts.push({ provider, outcome: bound.failure.reason });
              lines.push(bound.failure.reason);
              if (bound.failure.countsAgainstProvider) providerFailed = true;
              continue;
            }
            bindingId = bound.value.bindingId;
            orphan.on = { provider, sessionId: session.id, proxyNumber: number.proxyNumber, bindingId };
          }
          const from = { provider: session.provider, proxyNumber: session.proxyNumber };
          const reason = `${outage.provider} has been OPEN since ${new Date(outage.openedAt).toISOString()}${outage.lastError ? ` (${outage.lastError})` : ''}`;
          const done = await tx.complete(
            claimed,
            { provider, proxyNumberId: number.proxyNumberId, proxyNumber: number.proxyNumber, bindingId },
            {
              now,
              reason,
              notice: setting.notice,
              movedBy: this.leadership.replica,
              event: (moved) => sessionRebound(moved, from, reason, move.outageStartedAt, now),
            },
          );
          await tx.assertLeading(fence);
          const after = async () => {
            this.metrics.sessionRescues.inc({ from: from.provider, to: provider, outcome: 'moved' });
            this.pool.noteReserved(provider, number.proxyNumberId);
            if (move.fromBindingId) work.unreleased = true;
            this.logger.log(
              { sessionId: session.id, accountId: session.accountId, from: from.provider, to: provider },
              `session ${session.id} moved off ${from.provider} ${from.proxyNumber} to ${provider} ${number.proxyNumber}`,
            );
            for (const id of done.toSend) await this.relay.attempt(id);
          };
          return { outcome: 'moved', after };
        }

        if (attempts.length === 0 || providerFailed) {
          // Nothing admitted it, or a provider that did failed: the outage may outlast that; tried again later.
          const delay = Math.min(this.config.rescue.checkIntervalMs * 2 ** move.attempts, MAX_RETRY_DELAY_MS);
          const why = attempts.length === 0 ? 'no other provider admits sessions now' : lines.join('; ');
          await tx.postpone(move, why, new Date(now.getTime() + delay));
          return { outcome: 'postponed' };
        }
        const reason = `no provider that admits sessions has a proxy number free for this session: ${lines.join('; ')}`;
        await tx.settle(move, 'failed', reason, now, sessionRescueFailed(session, reason, attempts, move.outageStartedAt, now));
        await tx.assertLeading(fence);
        const after = async () => {
          this.metrics.sessionRescues.inc({ from: move.fromProvider, to: 'none', outcome: 'failed' });
          this.logger.warn(
            { sessionId: session.id, accountId: session.accountId, from: move.fromProvider },
            `session ${session.id} not moved: ${reason}`,
          );
        };
        return { outcome: 'failed', after };
      });
    } catch (error) {
      // Not committed: the new provider's binding, if one was made, is released (the move is tried again, perhaps elsewhere).
      if (orphan.on) await this.unbindOrphan(orphan.on);
      throw error;
    }
    // Committed: what follows (the notices and relays sent, counts) cannot undo it; a send that fails is retried as any relay.
    await settled.after?.().catch((error: unknown) => this.logger.warn({ err: error }, 'after a session move'));
    return settled.outcome;
  }

  /** Releases the old bindings of moved sessions on each provider that keeps sessions and is back (not OPEN). */
  private async releaseOldBindings(work: { unreleased: boolean }, stopping: AbortSignal): Promise<void> {
    const out = new Set(this.outages().map((o) => o.provider));
    const back = this.registry.names().filter((name) => !out.has(name) && this.registry.keepsSessions(name));
    const rows = back.length > 0 ? await this.moves.unreleased(back, RELEASE_BATCH) : [];
    if (rows.length < RELEASE_BATCH) {
      work.unreleased = false;
      // Those of a provider still out are looked for once it is back (its breaker's next transition).
      if (out.size > 0) this.unreleasedWhenBack = true;
    }
    for (const row of rows) {
      if (stopping.aborted) return;
      await this.paced(stopping);
      const result = await this.registry.call(row.fromProvider, 'unbind', false, (p) =>
        p.unbindProxy({ sessionId: row.sessionId, proxyNumber: row.fromProxyNumber, bindingId: row.fromBindingId! }),
      );
      // A refusal caused by our own request (the binding is gone already) needs no retry either.
      if (result.ok || !result.failure.countsAgainstProvider) await this.moves.markReleased(row.id, new Date(this.clock.now()));
      else work.unreleased = true;
    }
  }

  private async unbindOrphan(bound: { provider: string; sessionId: string; proxyNumber: string; bindingId: string }): Promise<void> {
    const result = await this.registry.call(bound.provider, 'unbind', false, (p) => p.unbindProxy(bound)).catch(() => null);
    if (!result?.ok)
      this.logger.warn(
        { sessionId: bound.sessionId, provider: bound.provider },
        `binding ${bound.bindingId} on ${bound.provider} left behind by a move that did not commit`,
      );
  }

  /** Waits, on the rescue's scheduler, until the pace lets the next provider call go. */
  private async paced(stopping: AbortSignal): Promise<void> {
    const wait = this.pacer.waitMs(this.scheduler.now());
    if (wait > 0) await pause(wait, this.scheduler, stopping);
    this.pacer.moved(this.scheduler.now());
  }
}

function keyOf(outage: Outage): OutageKey {
  return { provider: outage.provider, openedAt: new Date(outage.openedAt) };
}

function planKey(outage: Outage, account: { id: string; afterSeconds: number }): string {
  return `${outage.provider}|${outage.openedAt}|${account.id}|${account.afterSeconds}`;
}

/** Resolves after `ms` on `scheduler`, or at once when `signal` aborts. */
function pause(ms: number, scheduler: SchedulerLike, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      timer.unsubscribe();
      resolve();
    };
    const timer = scheduler.schedule(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
