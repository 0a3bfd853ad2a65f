import { Inject, Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type { ProviderFailure } from '@app/cpaas';
import { systemClock, type Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { ProblemException } from '../common/problem';
import { decodePageCursor, encodePageCursor } from '../common/pagination/page-cursor';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';
import { ProviderRegistry } from '../providers/provider-registry';
import { CallbackUrlValidator } from '../notifications';
import { DestinationPolicy } from '../destinations/destination-policy';
import { ParticipantNumbers } from '../destinations/participant-numbers';
import { sessionCreated, sessionEnded } from './session-events';
import { DEFAULT_TTL_SECONDS, sessionChannels, type CreateSessionDto } from './dto/create-session.dto';
import { SessionDto, type ListSessionsQueryDto, type SessionListDto } from './dto/session.dto';
import {
  ParticipantLimitError,
  PoolExhaustedError,
  SessionAllocator,
  UniqueNameTakenError,
  type ReservationRequest,
} from './session-allocator';
import { ended } from './session-expiry';
import type { Session } from './session.entity';
import { SessionRepository } from './session.repository';

/** A provider tried, as the problem's `attempts` show it: what it answered, without its name. */
interface Attempt {
  provider: string;
  outcome: string;
}

/** What a provider tried answered a create: no free number there, or a counted failure of its bind. */
type Tried = { provider: string; poolExhausted: true } | { provider: string; poolExhausted: false; failure: ProviderFailure };

const POOL_EXHAUSTED = 'pool exhausted';

/** What names a create in its log lines (docs/operations.md#logging): no request is bound to them implicitly. */
interface CreateWork {
  reqId?: string;
  accountId: string;
  idempotencyKey?: string;
}

/**
 * Creates sessions on the first provider whose breaker admits them, failing over to the next one
 * within the same request when binding fails, and closes them. The SDK sees one answer.
 */
@Injectable()
export class SessionsService {
  private readonly logger = new Logger(SessionsService.name);

  constructor(
    private readonly sessions: SessionRepository,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly registry: ProviderRegistry,
    private readonly allocator: SessionAllocator,
    private readonly metrics: BrokerMetrics,
    private readonly callbackUrls: CallbackUrlValidator,
    private readonly destinations: DestinationPolicy,
    private readonly participantNumbers: ParticipantNumbers,
    @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  /**
   * `idempotencyKey` is kept on the session, so a retry after a crash finds it (`createdWith`); it and
   * `requestId` (the request's `x-request-id`) name the create in its log lines.
   */
  async create(
    accountId: string,
    body: CreateSessionDto,
    idempotencyKey: string | null = null,
    requestId: string | null = null,
  ): Promise<SessionDto> {
    const work: CreateWork = { reqId: requestId ?? undefined, accountId, idempotencyKey: idempotencyKey ?? undefined };
    if (body.callbackUrl) this.callbackUrls.assertAcceptable(body.callbackUrl, 'callbackUrl');
    if (body.interceptUrl) this.callbackUrls.assertAcceptable(body.interceptUrl, 'interceptUrl');
    // E.164, or the account's national numbers (its default country): stored and answered in E.164.
    const participants = (await this.participantNumbers.read(accountId, [body.participants[0].number, body.participants[1].number])) as [
      string,
      string,
    ];
    const channels = sessionChannels(body);
    // A session that carries texts needs participants who can receive them; voice asks less of a number.
    await this.destinations.assertAllowed(accountId, channels.includes('sms') ? 'sms' : 'voice', participants);
    const attempts: Tried[] = [];
    let overLimit: ParticipantLimitError | undefined;
    /** Numbers the quarantine alone kept from these participants, on every provider tried. */
    let quarantined = 0;
    for (const candidate of this.registry.candidates()) {
      const provider = candidate.provider.name;
      const request: ReservationRequest = {
        accountId,
        provider,
        channels,
        participants,
        ttlSeconds: body.ttlSeconds ?? DEFAULT_TTL_SECONDS,
        idleTtlSeconds: body.idleTtlSeconds ?? null,
        callbackUrl: body.callbackUrl ?? null,
        metadata: body.metadata ?? {},
        idempotencyKey,
        uniqueName: body.uniqueName ?? null,
        interceptUrl: body.interceptUrl ?? null,
        preferSticky: body.numberSelection === 'prefer-sticky',
      };
      // The broker is the session store for a vendor that keeps none (docs/design.md#sessions-and-the-pool-rule): nothing to
      // ask it, no network wait, so the session, its event and its number are one statement and one commit. A probe
      // session proves the vendor by its texts and calls (docs/design.md#provider-breaker).
      const keepsSessions = candidate.provider.keepsSessions;
      let reservation: Session;
      try {
        reservation = keepsSessions
          ? await this.timed('reserve', () => this.allocator.reserve(request))
          : await this.timed('create', () => this.allocator.create(request));
      } catch (error) {
        if (error instanceof UniqueNameTakenError) throw this.failed(uniqueNameTaken(error));
        if (error instanceof ParticipantLimitError) overLimit = error;
        else if (error instanceof PoolExhaustedError) quarantined += error.quarantined;
        else throw error;
        attempts.push({ provider, poolExhausted: true });
        continue;
      }
      // A vendor that keeps no sessions has nothing to bind: its reservation is the session, active already.
      const bound = keepsSessions
        ? await this.timed('bind', () =>
            this.registry.call(provider, 'bind', candidate.probe, (p) =>
              p.bindProxy({ sessionId: reservation.id, proxyNumber: reservation.proxyNumber, participants }),
            ),
          )
        : null;
      if (!bound || bound.ok) {
        const session = bound ? await this.timed('activate', () => this.activate(reservation, bound.value.bindingId, work)) : reservation;
        this.metrics.sessionsCreated.inc({ provider, failed_over: String(attempts.length > 0) });
        return SessionDto.from(session, new Date(this.clock.now()));
      }
      await this.allocator.release(reservation.id);
      if (!bound.failure.countsAgainstProvider) {
        // The provider refused the request itself (say, a number it cannot serve): another provider would too.
        throw this.failed(
          new ProblemException({
            status: 422,
            slug: 'provider-refused',
            title: 'Refused by the provider',
            detail: bound.failure.reason,
            extensions: { provider },
          }),
        );
      }
      attempts.push({ provider, poolExhausted: false, failure: bound.failure });
      this.logger.warn(
        { ...work, sessionId: reservation.id, provider },
        `binding on ${provider} failed (${bound.failure.reason}); trying the next provider`,
      );
    }
    if (overLimit && attempts.every((a) => a.poolExhausted)) {
      this.metrics.limitRefusals.inc({ limit: 'session_participant_limit' });
      throw this.failed(participantLimit(overLimit));
    }
    if (quarantined > 0 && attempts.every((a) => a.poolExhausted)) this.metrics.limitRefusals.inc({ limit: 'session_number_quarantine' });
    throw this.failed(noProvider(attempts, { quarantined, seconds: this.config.sessions.numberQuarantineSeconds }));
  }

  /** Counts a create that ended without a session in `broker_sessions_failed_total{reason}` (the problem's type). */
  private failed(problem: ProblemException): ProblemException {
    this.metrics.sessionsFailed.inc({ reason: problem.slug });
    return problem;
  }

  /**
   * A takeover of a key whose create died: the reservation it left pending (killed in the provider's bind)
   * is dropped at once rather than by the sweeper a minute later, and the session it made, if it got that
   * far, is the answer. The dead create is fenced: its activation would find no pending row.
   */
  async takeOver(accountId: string, idempotencyKey: string, requestId: string | null = null): Promise<SessionDto | null> {
    const dropped = await this.sessions.dropPendingCreatedWith(accountId, idempotencyKey);
    for (const row of dropped) {
      this.logger.warn(
        { reqId: requestId ?? undefined, accountId, idempotencyKey, sessionId: row.id, provider: row.provider },
        `dropped reservation ${row.id} (${row.provider} ${row.proxyNumber}) left pending by a create that died; its key was taken over`,
      );
    }
    return this.createdWith(accountId, idempotencyKey);
  }

  /** The session a create with this key made (activated; a reservation left pending is not one), if any. */
  async createdWith(accountId: string, idempotencyKey: string): Promise<SessionDto | null> {
    const session = await this.sessions.findCreatedWith(accountId, idempotencyKey);
    return session ? SessionDto.from(session, new Date(this.clock.now())) : null;
  }

  async get(accountId: string, id: string): Promise<SessionDto> {
    return SessionDto.from(await this.find(accountId, id), new Date(this.clock.now()));
  }

  async list(accountId: string, query: ListSessionsQueryDto): Promise<SessionListDto> {
    const limit = query.limit ?? 50;
    const before = query.cursor ? decodePageCursor(query.cursor) : undefined;
    const now = new Date(this.clock.now());
    const rows = await this.sessions.page({ accountId, status: query.status, uniqueName: query.uniqueName, before, limit: limit + 1, now });
    const page = rows.slice(0, limit);
    return {
      sessions: page.map((s) => SessionDto.from(s, now)),
      nextCursor: rows.length > limit ? encodePageCursor(page[page.length - 1].createdAt, page[page.length - 1].id) : null,
    };
  }

  /** Closes an active session and releases its binding; closing it again changes nothing. */
  async close(accountId: string, id: string): Promise<SessionDto> {
    const closed = await this.sessions.transaction(async (tx) => {
      const session = await tx.lock(accountId, id);
      if (!session || session.status === 'pending') throw notFound();
      if (session.status !== 'active') return { session, changed: false };
      // Past its inactiveAt it had expired already (ttl or idle), swept or not.
      const closed = ended(session, new Date(this.clock.now()));
      await tx.end([closed]);
      await tx.record(sessionEnded(closed, closed.status === 'expired' ? 'expired' : 'closed'));
      return { session: closed, changed: true };
    });
    if (closed.changed) await this.releaseBinding(closed.session);
    return SessionDto.from(closed.session, new Date(this.clock.now()));
  }

  /** Asks the session's provider to unbind; on failure the sweeper tries again later. */
  async releaseBinding(session: Session): Promise<boolean> {
    if (!session.bindingId) {
      await this.sessions.markReleased(session.id);
      return true;
    }
    if (!this.registry.has(session.provider)) return false;
    const result = await this.registry.call(session.provider, 'unbind', false, (p) =>
      p.unbindProxy({ sessionId: session.id, proxyNumber: session.proxyNumber, bindingId: session.bindingId! }),
    );
    // A refusal caused by our own request (the binding is already gone) needs no retry either.
    if (result.ok || !result.failure.countsAgainstProvider) {
      await this.sessions.markReleased(session.id);
      return true;
    }
    this.logger.warn(
      { sessionId: session.id, provider: session.provider },
      `unbinding session ${session.id} on ${session.provider} failed (${result.failure.reason}); will retry`,
    );
    return false;
  }

  /** Feeds `broker_session_create_step_seconds`: each step's share of a create, in production. */
  private async timed<T>(step: 'reserve' | 'bind' | 'activate' | 'create', work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.metrics.createStepDuration.observe({ step }, (performance.now() - started) / 1000);
    }
  }

  /** One statement, one commit: the activation and its `session.created` event. */
  private async activate(reservation: Session, bindingId: string | null, work: CreateWork): Promise<Session> {
    const session: Session = { ...reservation, status: 'active', bindingId };
    if (await this.sessions.activate(session, sessionCreated(session))) return session;
    // The sweeper removed the reservation while the bind took too long: no 201 for a session that is not stored.
    this.logger.warn(
      { ...work, sessionId: session.id, provider: session.provider },
      `session ${session.id} was no longer pending when its binding came back; unbinding`,
    );
    await this.releaseBinding(session);
    throw this.failed(
      new ProblemException({
        status: 503,
        slug: 'reservation-expired',
        title: 'Reservation expired',
        detail: 'The proxy number reservation expired while the provider was binding; try again.',
      }),
    );
  }

  private async find(accountId: string, id: string): Promise<Session> {
    const session = await this.sessions.find(accountId, id);
    // Another account's session, or one not made yet, is simply not there.
    if (!session || session.status === 'pending') throw notFound();
    return session;
  }
}

function notFound(): ProblemException {
  return new ProblemException({
    status: 404,
    slug: 'session-not-found',
    title: 'Session not found',
    detail: 'No session with this id exists for your account.',
  });
}

function uniqueNameTaken(error: UniqueNameTakenError): ProblemException {
  return new ProblemException({
    status: 409,
    slug: 'unique-name-taken',
    title: 'Unique name taken',
    detail: `Another live session of this account is named ${JSON.stringify(error.uniqueName)}; close it, or use another uniqueName. GET /v1/sessions?uniqueName= finds it.`,
    extensions: { uniqueName: error.uniqueName },
  });
}

function participantLimit(error: ParticipantLimitError): ProblemException {
  return new ProblemException({
    status: 429,
    title: 'Participant limit reached',
    detail: `This account already holds ${error.held} active sessions with ${error.number}, the most allowed on the shared pool (SESSION_PARTICIPANT_LIMIT=${error.limit}), so that one account cannot take every proxy number a person can be reached on. Close one, wait for one to expire, or ask an operator for numbers dedicated to this account.`,
    slug: 'participant-limit',
    extensions: { number: error.number, limit: error.limit },
  });
}

function noProvider(tried: Tried[], quarantine: { quarantined: number; seconds: number }): ProblemException {
  const attempts = tried.map(attempt);
  if (attempts.length === 0) {
    return new ProblemException({
      status: 503,
      slug: 'no-provider',
      title: 'No provider available',
      detail: 'Every provider is disabled; no session can be created now.',
    });
  }
  if (tried.every((a) => a.poolExhausted)) {
    return new ProblemException({
      status: 503,
      slug: 'pool-exhausted',
      title: 'Proxy number pool exhausted',
      detail:
        `Pool exhausted: no proxy number is free for these participants on ${attempts.map((a) => a.provider).join(' or ')}.` +
        (quarantine.quarantined > 0
          ? ` ${quarantine.quarantined} of them ${quarantine.quarantined === 1 ? 'is' : 'are'} held by the quarantine: one of the two had a session there with someone else in the last ${quarantine.seconds} s (SESSION_NUMBER_QUARANTINE_SECONDS), so that a text to an old masked number reaches no stranger.`
          : ''),
      extensions: { attempts },
    });
  }
  return new ProblemException({
    status: 503,
    slug: 'providers-failed',
    title: 'Every provider failed',
    detail: `The session could not be created: ${attempts.map((a) => `${a.provider}: ${a.outcome}`).join('; ')}.`,
    extensions: { attempts },
  });
}

/** An attempt names its provider, so its outcome is the failure's detail ("HTTP 503 on bind"), not its reason line. */
function attempt(tried: Tried): Attempt {
  return { provider: tried.provider, outcome: tried.poolExhausted ? POOL_EXHAUSTED : tried.failure.detail };
}
