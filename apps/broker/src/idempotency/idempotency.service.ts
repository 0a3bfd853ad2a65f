import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { ProblemException } from '../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { ListenClient } from '../database/listen-client';
import { IDEMPOTENCY_CHANNEL, IdempotencyRepository, keyTopic } from './idempotency.repository';

const IDEMPOTENCY_TTL_HOURS = 24;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/**
 * A waiter for a first request on another replica wakes on its NOTIFY, and looks again after
 * RECHECK_MS anyway (a lost notification). With LISTEN down it looks again after FIRST_WAIT_MS,
 * doubling up to MAX_WAIT_MS.
 */
const RECHECK_MS = 2_000;
const FIRST_WAIT_MS = 50;
const MAX_WAIT_MS = 1_000;
const TTL_MS = IDEMPOTENCY_TTL_HOURS * 3_600_000;

/** A JSON text with sorted keys: the same body in another key order is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A kept answer, given again: its status and its body as the text first sent. The HTTP side
 * (IdempotentAnswers) sends it, saying it is a replay.
 */
export class Replay {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {}
}

/** What became of a request with a key, as the requests waiting on it on this replica learn it. */
type Outcome = { kept: true; status: number; body: string } | { kept: false };

/**
 * The one request per key on this replica that talks to the database for it: the first request
 * itself once `first` (it holds the claim), or one waiting for a first request elsewhere. The other
 * requests with its body wait on `done` and touch the database not at all.
 */
interface Flight {
  readonly requestHash: string;
  first: boolean;
  outcome: Outcome;
  readonly done: Promise<Outcome>;
  land(outcome: Outcome): void;
}

/**
 * `Idempotency-Key` for POST /v1/sessions and POST /v1/sessions/:id/messages: the first request with a key runs and its answer is kept
 * 24 h; the same key with the same body replays that answer; with another body it is a 422. A
 * request arriving while the first is still running waits for its answer, so concurrent requests
 * with one key make one session. A first request still unanswered after the longest a create can
 * take (`takeoverAfterMs`) died (kill -9, lost connection): the next request with the key takes it
 * over, first asking `recover` whether the dead one had made its session, and only then runs again.
 * The claim's time fences the dead request: an answer of a request that lost its claim is not kept.
 * A 5xx is not kept: the client may retry with the same key. Bodies are kept as the text first sent,
 * so a replay is byte-identical. Times come from the clock.
 *
 * Waiting: on each replica one request per key (a Flight) talks to the database; the others with
 * the same body wait on it in memory and are woken the moment it ends. When the first request runs
 * on this replica (the usual case) nobody polls; when it runs on another, the flight wakes on the NOTIFY the first request's answer (or its letting go of the key) sends on
 * IDEMPOTENCY_CHANNEL, heard through the replica's shared LISTEN connection, and looks again every
 * `recheckMs` (2 s) in case a notification was lost; while LISTEN is down it looks again after 50 ms,
 * doubling up to 1 s. See docs/design.md#idempotency-and-crash-takeover.
 */
@Injectable()
export class IdempotencyService implements OnApplicationBootstrap, OnApplicationShutdown {
  /** The longest a create can take: every provider tried up to its timeout, plus one call's and 5 s of margin. */
  readonly takeoverAfterMs: number;

  /** How long a waiter on another replica's first request trusts LISTEN before looking again. */
  recheckMs = RECHECK_MS;

  private readonly flights = new Map<string, Flight>();
  /** Flights waiting on another replica, by `keyTopic`: each wakes when its key's NOTIFY arrives. */
  private readonly wakers = new Map<string, Set<() => void>>();
  private unlisten: Array<() => void> = [];

  constructor(
    private readonly records: IdempotencyRepository,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly listener: ListenClient,
  ) {
    this.takeoverAfterMs = config.providerCallTimeoutMs * (config.providers.length + 1) + 5_000;
  }

  onApplicationBootstrap(): void {
    this.unlisten.push(
      this.listener.subscribe(IDEMPOTENCY_CHANNEL, (topic) => {
        for (const wake of this.wakers.get(topic) ?? []) wake();
      }),
      // Notifications sent while the connection was down are lost: every waiter looks again.
      this.listener.onReconnect(() => {
        for (const set of this.wakers.values()) for (const wake of set) wake();
      }),
    );
  }

  onApplicationShutdown(): void {
    for (const off of this.unlisten.splice(0)) off();
  }

  /**
   * `body` is what the key is bound to (the request body, and for a route under a resource its id); `status` the
   * success status a first answer is sent and kept with (201 for a create, 202 for a message accepted). The answer is
   * the work's, or a `Replay` of the kept one.
   */
  async run<T>(
    accountId: string,
    key: string,
    body: unknown,
    work: () => Promise<T>,
    recover: () => Promise<T | null> = async () => null,
    status = 201,
  ): Promise<T | Replay> {
    if (!KEY_PATTERN.test(key)) {
      throw new ProblemException({
        status: 400,
        slug: 'validation-error',
        title: 'Invalid Idempotency-Key',
        detail: 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.',
        extensions: {
          errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters without spaces' }],
        },
      });
    }
    const requestHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
    const flightId = `${accountId}\u0000${key}`;
    for (;;) {
      const flight = this.flights.get(flightId);
      // Another body waits on a flight only when that flight is the first request (its body is the key's).
      if (flight && (flight.requestHash === requestHash || flight.first)) {
        if (flight.requestHash !== requestHash) throw reused();
        const outcome = await flight.done;
        if (outcome.kept) return new Replay(outcome.status, outcome.body);
        continue; // not kept (a 5xx, a 422, a lost claim): look again
      }
      return this.lookUp(flight ? undefined : this.fly(flightId, requestHash), accountId, key, requestHash, work, recover, status);
    }
  }

  private fly(flightId: string, requestHash: string): Flight {
    let land!: (outcome: Outcome) => void;
    const done = new Promise<Outcome>((resolve) => (land = resolve));
    const flight: Flight = { requestHash, first: false, outcome: { kept: false }, done, land };
    this.flights.set(flightId, flight);
    return flight;
  }

  /** The database part of `run`; with a flight, for every request with this body on this replica. */
  private async lookUp<T>(
    flight: Flight | undefined,
    accountId: string,
    key: string,
    requestHash: string,
    work: () => Promise<T>,
    recover: () => Promise<T | null>,
    status: number,
  ): Promise<T | Replay> {
    const landing: Flight | { first: boolean; outcome: Outcome } = flight ?? { first: false, outcome: { kept: false } };
    const topic = keyTopic(accountId, key);
    try {
      for (let waitMs = FIRST_WAIT_MS; ;) {
        // Listening before the look, so a NOTIFY sent while it runs still wakes the wait after it.
        const alarm = this.alarm(topic);
        try {
          const now = this.clock.now();
          if (await this.records.claim(accountId, key, requestHash, new Date(now), new Date(now + TTL_MS))) {
            landing.first = true;
            return await this.runFirst(landing, accountId, key, new Date(now), work, status);
          }
          const record = await this.records.find(accountId, key);
          if (!record) continue; // the first request failed with a 5xx and let go of the key: take it
          if (record.expiresAt.getTime() <= now) {
            await this.records.deleteExpired(accountId, key, new Date(now));
            continue;
          }
          if (record.requestHash !== requestHash) throw reused();
          if (record.responseStatus !== null) {
            landing.outcome = { kept: true, status: record.responseStatus, body: record.responseBody! };
            return new Replay(record.responseStatus, record.responseBody!);
          }
          if (now - record.createdAt.getTime() >= this.takeoverAfterMs) {
            const claimedAt = new Date(now);
            if (!(await this.records.takeOver(accountId, key, new Date(now - this.takeoverAfterMs), claimedAt, new Date(now + TTL_MS))))
              continue;
            landing.first = true;
            // A taken-over key first asks whether the dead request had made its session.
            return await this.runFirst(landing, accountId, key, claimedAt, async () => (await recover()) ?? (await work()), status);
          }
          if (this.listener.connected) {
            // Not past the moment the claim may be taken over, should the first request have died.
            const untilTakeover = record.createdAt.getTime() + this.takeoverAfterMs - now;
            await alarm.wait(Math.max(FIRST_WAIT_MS, Math.min(this.recheckMs, untilTakeover)));
          } else {
            await alarm.wait(waitMs);
            waitMs = Math.min(waitMs * 2, MAX_WAIT_MS);
          }
        } finally {
          alarm.off();
        }
      }
    } finally {
      if (flight) {
        this.flights.delete(`${accountId}\u0000${key}`);
        flight.land(flight.outcome);
      }
    }
  }

  /** Listens for the key's NOTIFY from now on: `wait(ms)` ends on it (or one heard already) or after `ms`. */
  private alarm(topic: string): { wait(ms: number): Promise<void>; off(): void } {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let set = this.wakers.get(topic);
    if (!set) this.wakers.set(topic, (set = new Set()));
    set.add(wake);
    let timer: NodeJS.Timeout | undefined;
    return {
      wait: (ms) => Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]),
      off: () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.wakers.get(topic) === set) this.wakers.delete(topic);
      },
    };
  }

  /** Runs the work of the request holding the claim made at `claimedAt`; `landing.outcome` says what was kept. */
  private async runFirst<T>(
    landing: { outcome: Outcome },
    accountId: string,
    key: string,
    claimedAt: Date,
    work: () => Promise<T>,
    status: number,
  ): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (error) {
      if (error instanceof ProblemException && error.getStatus() < 500) {
        landing.outcome = await this.store(accountId, key, claimedAt, error.getStatus(), error.toProblem());
      } else {
        await this.records.release(accountId, key, claimedAt);
      }
      throw error;
    }
    landing.outcome = await this.store(accountId, key, claimedAt, status, result);
    return result;
  }

  /** Keeps the answer as the text sent, if this request still holds the claim it made at `claimedAt`. */
  private async store(accountId: string, key: string, claimedAt: Date, status: number, body: unknown): Promise<Outcome> {
    const text = JSON.stringify(body);
    return (await this.records.store(accountId, key, claimedAt, status, text)) ? { kept: true, status, body: text } : { kept: false };
  }

  /** Forgets records older than 24 h. */
  purgeExpired(): Promise<number> {
    return this.records.purgeExpired(new Date(this.clock.now()));
  }
}

function reused(): ProblemException {
  return new ProblemException({
    status: 422,
    title: 'Idempotency-Key reused',
    detail: 'This Idempotency-Key was used with a different request body; use a new key for a new request.',
    slug: 'idempotency-key-reused',
  });
}
