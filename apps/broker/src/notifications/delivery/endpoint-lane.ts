/**
 * The work of one replica on one endpoint it owns: fetch its due deliveries a few at a time, send them with
 * at most `maxInFlight` attempts in flight, write the outcomes back in batches, and stop when nothing is
 * due, when the endpoint blocks (down or breaker open) or when the worker stops. Fetching, sending and
 * writing overlap, so the database round trips do not sit between two attempts.
 *
 * A delivery stays in `held` from the moment it is fetched until its outcome is written, so a fetch never
 * returns one the lane is still working on. Deliveries fetched but not sent (the endpoint blocked, or the
 * worker stopped) are simply let go: they are still due in the database, and the next owner (or
 * `holdBlocked`) takes care of them.
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import type { Clock } from '@app/clock';
import type { ClaimedDelivery, DeliveryOutcome, DeliveryStore, AcquiredEndpoint, EndpointKey, EndpointWrite } from './delivery-store';
import { EndpointHealth, endpointPolicies, type EndpointAdmission, type EndpointHealthSettings } from './endpoint-health';
import { nextAttemptAt, type RetrySchedule } from './retry-schedule';
import type { AttemptResult, WebhookSender } from './webhook-sender';

export interface LaneSettings extends EndpointHealthSettings, RetrySchedule {
  readonly maxInFlight: number;
  readonly leaseMs: number;
  /**
   * How long a lane with nothing due stays (owning its endpoint) for new deliveries before it lets the
   * endpoint go: a steady stream then flows through one lane instead of re-acquiring the endpoint per event.
   */
  readonly lingerMs: number;
}

/** Builds the body and the signed headers of a delivery at send time. */
export interface DeliveryPreparer {
  prepare(delivery: ClaimedDelivery, now: number): Promise<{ body: string; headers: Record<string, string> }>;
}

export interface LaneLogger {
  warn(message: string): void;
}

interface LaneDeps {
  readonly store: DeliveryStore;
  readonly sender: WebhookSender;
  readonly preparer: DeliveryPreparer;
  readonly clock: Clock;
  readonly random: () => number;
  readonly settings: LaneSettings;
  readonly owner: string;
  readonly logger: LaneLogger;
  /** Runs the lane's pacing timers (outcome flush, linger): rxjs's `asyncScheduler` in the app, a virtual one in tests. */
  readonly scheduler: SchedulerLike;
}

/** How a lane ended: `idle` (nothing due), `blocked`, `stopped` (by the worker) or `failed` (database error). */
export type LaneEnd = 'idle' | 'blocked' | 'stopped' | 'failed';

/**
 * Database round trips are what a delivery costs most, so they are shared: the lane keeps up to
 * `maxInFlight × PREFETCH_FACTOR` due deliveries fetched ahead (fetching again when half are gone), and
 * writes outcomes in batches of up to FLUSH_BATCH, at most FLUSH_DELAY_MS after the first of them (at once
 * when the endpoint's state changed or the lane has nothing else to do).
 */
const PREFETCH_FACTOR = 16;
const FLUSH_BATCH = 64;
const FLUSH_DELAY_MS = 10;

export class EndpointLane {
  readonly url: string;
  /** The endpoint this lane works on: the URL, for one account (or the operator). */
  readonly key: EndpointKey;
  /** Its row in webhook_endpoints. */
  readonly endpointId: string;
  readonly done: Promise<LaneEnd>;
  private resolveDone!: (end: LaneEnd) => void;
  private readonly health: EndpointHealth;
  private readonly queue: ClaimedDelivery[] = [];
  private readonly held = new Set<string>();
  private readonly outcomes: DeliveryOutcome[] = [];
  private readonly abort = new AbortController();
  private inFlight = 0;
  private fetching = false;
  private flushing = false;
  private exhausted = false;
  /** Bumped by every poke: a fetch that started before a poke cannot tell that nothing more is due. */
  private pokes = 0;
  private lingerTimer: Subscription | null = null;
  private lingered = false;
  private flushTimer: Subscription | null = null;
  private flushDue = false;
  /** The endpoint state last written; outcome batches leave the endpoint row alone while it is unchanged. */
  private writtenState: string;
  private stopping = false;
  private failed = false;
  private finished = false;
  private releaseBacklog = false;
  private blockedUntil: number | null = null;
  /** What the log names the endpoint by: its host (a URL's path or query may carry the receiver's token). */
  private readonly host: string;
  private lastError: string | null;
  private lastSuccessAt: number | null;

  constructor(
    endpoint: AcquiredEndpoint,
    private readonly deps: LaneDeps,
  ) {
    this.url = endpoint.url;
    this.key = { accountId: endpoint.accountId, url: endpoint.url };
    this.endpointId = endpoint.id;
    this.host = URL.canParse(endpoint.url) ? new URL(endpoint.url).host : 'an unparsable URL';
    this.lastError = endpoint.lastError;
    this.lastSuccessAt = endpoint.lastSuccessAt;
    this.health = new EndpointHealth(
      endpointPolicies(deps.settings),
      { down: endpoint.downBreaker, url: endpoint.urlBreaker },
      deps.clock,
      deps.random,
    );
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.writtenState = this.endpointState();
  }

  start(): void {
    this.pump();
  }

  /** New deliveries may be due: look again. */
  poke(): void {
    if (this.stopping || this.finished) return;
    this.pokes += 1;
    this.exhausted = false;
    this.cancelLinger();
    this.pump();
  }

  /** Aborts attempts in flight (they do not count as attempts), writes what is done, releases the endpoint. */
  stop(): Promise<LaneEnd> {
    if (!this.finished) {
      this.stopping = true;
      this.cancelLinger();
      this.abort.abort();
      this.pump();
    }
    return this.done;
  }

  private pump(): void {
    if (this.finished) return;
    if (!this.stopping && this.blockedUntil === null) this.sendWhatIsAllowed();
    if (this.stopping || this.blockedUntil !== null) this.letGoOfQueue();
    this.fetchIfLow();
    this.flushIfNeeded();
    this.finishIfIdle();
  }

  private sendWhatIsAllowed(): void {
    while (this.queue.length > 0 && this.inFlight < this.deps.settings.maxInFlight) {
      const next = this.queue[0];
      if (next.expiresAt <= this.deps.clock.now()) {
        this.queue.shift();
        this.outcomes.push({ id: next.id, status: 'given_up', nextAttemptAt: null, attempt: null });
        continue;
      }
      const gate = this.health.gate(this.inFlight);
      if (gate.kind === 'blocked') {
        this.blockedUntil = gate.until;
        return;
      }
      if (gate.kind === 'wait') return;
      this.queue.shift();
      this.inFlight += 1;
      void this.attempt(next, gate.admission);
    }
  }

  private letGoOfQueue(): void {
    for (const delivery of this.queue.splice(0)) this.held.delete(delivery.id);
  }

  private async attempt(delivery: ClaimedDelivery, admission: EndpointAdmission): Promise<void> {
    const startedAt = this.deps.clock.now();
    let result: AttemptResult | null;
    try {
      const { body, headers } = await this.deps.preparer.prepare(delivery, startedAt);
      result = await this.deps.sender.send({ url: this.url, body, headers, trusted: delivery.kind === 'ops', signal: this.abort.signal });
    } catch (error) {
      // Could not even build the request (the secrets could not be read): not an attempt.
      this.deps.logger.warn(`webhook ${delivery.id}: could not prepare the request: ${(error as Error).message}`);
      result = null;
    }
    this.inFlight -= 1;
    const now = this.deps.clock.now();
    if (result === null || result.aborted) {
      // Not attempted: due again at once for whoever owns the endpoint next (this lane is stopping or will retry).
      this.outcomes.push({
        id: delivery.id,
        status: 'pending',
        nextAttemptAt: result === null ? now + this.deps.settings.baseMs : now,
        attempt: null,
      });
    } else {
      const attempt = {
        startedAt,
        durationMs: result.durationMs,
        statusCode: result.statusCode,
        error: result.error,
        delivered: result.delivered,
      };
      const recovered = this.health.record(
        admission,
        result.delivered ? { ok: true, durationMs: result.durationMs } : { ok: false, reason: result.error ?? 'failed' },
      );
      if (result.delivered) {
        this.lastSuccessAt = now;
        this.outcomes.push({ id: delivery.id, status: 'delivered', nextAttemptAt: null, attempt });
      } else {
        this.lastError = result.error;
        const next = nextAttemptAt(now, delivery.attempts + 1, this.deps.random(), delivery.expiresAt, this.deps.settings);
        this.outcomes.push({ id: delivery.id, status: 'pending', nextAttemptAt: next, attempt });
      }
      if (recovered) {
        // Back to normal (a 2xx, whichever attempt it answered): what the endpoint's block let go is sent again now.
        this.releaseBacklog = true;
        this.exhausted = false;
        this.blockedUntil = null;
      }
    }
    this.pump();
  }

  private fetchIfLow(): void {
    if (this.fetching || this.exhausted || this.stopping || this.blockedUntil !== null) return;
    // A trial goes alone: fetch one at a time until the endpoint is back.
    // Far ahead of the sends: under load a fetch takes many attempts' time, and the queue must not run dry.
    const max = this.deps.settings.maxInFlight;
    const target = this.health.inTrial() ? 1 : max * PREFETCH_FACTOR;
    if (this.queue.length >= Math.min(target, (max * PREFETCH_FACTOR) / 2)) return;
    const want = target - this.queue.length;
    if (want <= 0) return;
    this.fetching = true;
    void this.fetch(want);
  }

  private async fetch(want: number): Promise<void> {
    const pokes = this.pokes;
    try {
      const rows = await this.deps.store.fetch(this.key, this.deps.clock.now(), want, [...this.held]);
      for (const row of rows) {
        this.held.add(row.id);
        this.queue.push(row);
      }
      if (rows.length < want && pokes === this.pokes) this.exhausted = true;
    } catch (error) {
      this.fail('could not fetch deliveries', error);
    } finally {
      this.fetching = false;
      this.pump();
    }
  }

  private flushIfNeeded(): void {
    if (this.flushing || (this.outcomes.length === 0 && !this.releaseBacklog)) return;
    const state = this.endpointState();
    const urgent =
      this.flushDue ||
      this.outcomes.length >= FLUSH_BATCH ||
      this.releaseBacklog ||
      this.stopping ||
      this.blockedUntil !== null ||
      state !== this.writtenState ||
      (this.inFlight === 0 && this.queue.length === 0);
    if (!urgent) {
      this.flushTimer ??= this.deps.scheduler.schedule(() => {
        this.flushTimer = null;
        this.flushDue = true;
        this.pump();
      }, FLUSH_DELAY_MS);
      return;
    }
    this.flushTimer?.unsubscribe();
    this.flushTimer = null;
    this.flushDue = false;
    this.flushing = true;
    const endpoint = state !== this.writtenState ? this.endpointWrite() : null;
    this.writtenState = state;
    void this.flush(this.outcomes.splice(0), this.releaseBacklog, endpoint);
    this.releaseBacklog = false;
  }

  private async flush(batch: DeliveryOutcome[], releaseBacklog: boolean, endpoint: EndpointWrite | null): Promise<void> {
    try {
      const now = this.deps.clock.now();
      await this.deps.store.complete(this.endpointId, this.deps.owner, batch, endpoint, now, now + this.deps.settings.leaseMs);
      for (const outcome of batch) this.held.delete(outcome.id);
      if (releaseBacklog) await this.deps.store.releaseBacklog(this.key, now, [...this.held]);
    } catch (error) {
      // The outcomes are lost, not the deliveries: they are still pending in the database and go again.
      for (const outcome of batch) this.held.delete(outcome.id);
      this.fail('could not write delivery outcomes', error);
    } finally {
      this.flushing = false;
      this.pump();
    }
  }

  private fail(what: string, error: unknown): void {
    this.deps.logger.warn(`webhooks to ${this.host}: ${what}: ${(error as Error).message}`);
    this.failed = true;
    this.stopping = true;
    this.abort.abort();
  }

  private finishIfIdle(): void {
    if (this.inFlight > 0 || this.fetching || this.flushing || this.outcomes.length > 0 || this.releaseBacklog) return;
    // Idle: nothing in flight and nothing more to fetch; a non-empty queue here is one the gate will not let
    // through with nothing in flight, which a fresh lane (rebuilt from the stored state) sorts out.
    if (!this.stopping && this.blockedUntil === null && !this.exhausted && this.queue.length === 0) return;
    if (!this.stopping && this.blockedUntil === null && this.queue.length === 0 && !this.lingered && this.deps.settings.lingerMs > 0) {
      // Nothing due: stay a moment for what the next NOTIFY brings, then let the endpoint go.
      this.lingerTimer ??= this.deps.scheduler.schedule(() => {
        this.lingerTimer = null;
        this.lingered = true;
        this.pump();
      }, this.deps.settings.lingerMs);
      return;
    }
    this.finished = true;
    this.flushTimer?.unsubscribe();
    this.letGoOfQueue();
    void this.finish();
  }

  private async finish(): Promise<void> {
    const end: LaneEnd = this.failed ? 'failed' : this.stopping ? 'stopped' : this.blockedUntil !== null ? 'blocked' : 'idle';
    try {
      await this.deps.store.release(this.endpointId, this.deps.owner, this.endpointWrite(), this.deps.clock.now());
    } catch (error) {
      this.deps.logger.warn(
        `webhooks to ${this.host}: could not release the endpoint (its lease will run out): ${(error as Error).message}`,
      );
    } finally {
      this.health.dispose();
      this.resolveDone(end);
    }
  }

  private cancelLinger(): void {
    this.lingered = false;
    this.lingerTimer?.unsubscribe();
    this.lingerTimer = null;
  }

  /** What of the endpoint's state is worth writing: the breakers' states and counts, the last error. */
  private endpointState(): string {
    const { down, url } = this.health.status();
    return [
      down.state,
      down.consecutiveFailures,
      down.opens,
      down.retryAt,
      url.state,
      url.consecutiveFailures,
      url.opens,
      url.retryAt,
      this.lastError,
    ].join('|');
  }

  private endpointWrite(): EndpointWrite {
    const { down, url } = this.health.snapshots();
    // From the breakers, not from what this lane met: an endpoint that failed its last attempts is blocked
    // even if nothing was left to send.
    return {
      downBreaker: down,
      urlBreaker: url,
      blockedUntil: this.health.blockedUntil(),
      lastError: this.lastError,
      lastSuccessAt: this.lastSuccessAt,
    };
  }
}
