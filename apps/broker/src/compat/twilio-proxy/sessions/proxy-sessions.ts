/**
 * Twilio Proxy Sessions and Participants on the broker's sessions (docs/twilio-proxy-migration.md).
 *
 * A Proxy Session is made empty; its participants come one by one. The first one gets a proxy number at
 * once (its `proxy_identifier`): one of the Service's numbers on the first provider whose breaker admits a
 * session, reserved for it alone as a `pending` broker session with the Proxy Session's id, so the pool rule
 * holds it (no other session can give that person that number) until the second participant joins or the
 * Session ends. The second one makes the pair: in one transaction the hold is dropped and the pair reserved,
 * on the hold's number when it can take the second person too (the first participant's number does not
 * change), else on another one of the Service's; then the provider binds it (where the provider keeps
 * sessions) and the broker session is activated with its `session.created`. A bind that fails on one
 * provider is retried on the next within the same request: failover, which Twilio Proxy never had. From
 * then on the broker relays, expires and closes it as any of its sessions.
 *
 * Races are settled in the database, not answered with Twilio's 409: adds to one Session are serialised by
 * its row lock (the second of two concurrent second participants gets 80609, a person added twice 80103),
 * and two reservations that chose the same number for the same person are told apart by the pool rule's
 * unique index: the loser picks again.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../../../common/clock';
import { ProblemException } from '../../../common/problem';
import { uuidOfTwilioSid } from '../../../common/twilio-sid';
import { DestinationPolicy } from '../../../destinations/destination-policy';
import { ParticipantNumbers } from '../../../destinations/participant-numbers';
import { BrokerMetrics } from '../../../metrics/broker-metrics';
import { E164 } from '../../../numbers/dto/proxy-number.dto';
import { PoolUsage } from '../../../providers/pool-usage';
import { ProviderRegistry } from '../../../providers/provider-registry';
import type { RoutingCandidate } from '../../../providers/provider-router';
import { MAX_TTL_SECONDS } from '../../../sessions/dto/create-session.dto';
import { sessionCreated } from '../../../sessions/session-events';
import { Session } from '../../../sessions/session.entity';
import { SessionRepository } from '../../../sessions/session.repository';
import { SessionsService } from '../../../sessions/sessions.service';
import { TWILIO_CODES, TwilioApiError, invalidParameter, notFound } from '../http/twilio-error';
import type { PageRequest } from '../http/twilio-page';
import type { TwilioParams } from '../http/twilio-params';
import { ProxyServiceNumberRepository } from '../phone-numbers/proxy-service-number.repository';
import type { ProxyService } from '../services/proxy-service.entity';
import { violatedIndex } from '../unique-violation';
import type { ProxyParticipant } from './proxy-participant.entity';
import type { ProxyReservation } from './proxy-reservation.repository';
import type { ProxySession, ProxySessionMode } from './proxy-session.entity';
import {
  ProxySessionRepository,
  type CarryingSession,
  type ProxySessionTransaction,
  type ProxySessionView,
} from './proxy-session.repository';
import { MODES, firstDeadline, idleTtlOf, modeChannels, sessionState } from './session-rules';
import { timeOrderedUuid } from './time-ordered-id';

/** What a participant is added with (a Participants create, or one entry of a Session create's `Participants`). */
interface ParticipantInput {
  readonly identifier: string;
  readonly friendlyName?: string;
  readonly proxyIdentifier?: string;
  readonly proxyIdentifierSid?: string;
}

/** A pool number a participant asked for: one of the Service's. */
interface AskedNumber {
  readonly id: string;
  readonly provider: string;
  readonly number: string;
}

/** The pool rule's index: another reservation took this number for one of these people first. */
const POOL_RULE_INDEX = 'uq_active_participant_per_proxy';
const MAX_ATTEMPTS = 8;
const MAX_FRIENDLY_NAME = 255;
const MAX_UNIQUE_NAME = 191;

/** None of the Service's numbers on this provider can take these participants: the transaction rolls back. */
class NoNumberOnProvider extends Error {
  override name = 'NoNumberOnProvider';
}

@Injectable()
export class ProxySessions {
  private readonly logger = new Logger(ProxySessions.name);

  constructor(
    private readonly sessions: ProxySessionRepository,
    private readonly serviceNumbers: ProxyServiceNumberRepository,
    private readonly registry: ProviderRegistry,
    private readonly pool: PoolUsage,
    private readonly brokerSessions: SessionsService,
    private readonly carriers: SessionRepository,
    private readonly participantNumbers: ParticipantNumbers,
    private readonly destinations: DestinationPolicy,
    private readonly metrics: BrokerMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(service: ProxyService, params: TwilioParams): Promise<ProxySessionView> {
    // To the second, as Twilio writes it: the instants its clients read (date_created, date_expiry) are the rules' own;
    // the id, made from the full instant, orders the Sessions of one second.
    const instant = this.clock.now();
    const now = new Date(Math.floor(instant / 1000) * 1000);
    const mode: ProxySessionMode = params.oneOf('Mode', MODES) ?? 'voice-and-message';
    const status = params.oneOf('Status', ['open', 'in-progress', 'closed', 'failed', 'unknown'] as const);
    if (status !== undefined && status !== 'open' && status !== 'in-progress')
      throw invalidParameter('Status', 'a new Session is open (or in-progress); close it afterwards.');
    const uniqueName = params.string('UniqueName', { max: MAX_UNIQUE_NAME });
    const ttl = params.integer('Ttl', { min: 0, max: MAX_TTL_SECONDS }) ?? service.defaultTtl;
    const dateExpiry = this.dateExpiry(params, now);
    const participants = params.list('Participants').map(participantInput);
    if (participants.length > 2) throw tooManyParticipants();
    const row: Omit<ProxySession, 'service'> = {
      id: timeOrderedUuid(instant),
      serviceId: service.id,
      accountId: service.accountId,
      uniqueName: uniqueName ?? null,
      mode,
      ttl,
      dateExpiry: dateExpiry ?? null,
      expiresAt: dateExpiry ?? new Date(now.getTime() + MAX_TTL_SECONDS * 1000),
      closedAt: null,
      closedReason: null,
      deletedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    const created = await this.sessions.create(row);
    if (created === 'name-taken')
      throw new TwilioApiError(
        409,
        TWILIO_CODES.nonUniqueSessionName,
        `Session UniqueName must be unique: ${JSON.stringify(uniqueName)} is taken in this Service.`,
      );
    try {
      for (const participant of participants) await this.addTo(service, created.id, participant);
    } catch (error) {
      // One create, one outcome: a Session whose participants could not all be added is not left behind.
      await this.delete(service, created.id);
      throw error;
    }
    return this.view(service, created.id);
  }

  /** By sid (`KC…`) or unique name. */
  async get(service: ProxyService, sidOrName: string): Promise<ProxySessionView> {
    const id = uuidOfTwilioSid('KC', sidOrName);
    const found = await this.sessions.find(service.accountId, service.id, id, id === null ? sidOrName : null);
    if (!found) throw notFound(`/Sessions/${sidOrName}`);
    return found;
  }

  list(service: ProxyService, page: PageRequest): Promise<ProxySessionView[]> {
    return this.sessions.page(service.accountId, service.id, page.size + 1, page.after);
  }

  /** Its current participants, first first; `withRemoved`: every one it had, oldest first. */
  participants(sessionId: string, withRemoved = false): Promise<ProxyParticipant[]> {
    return this.sessions.participants(sessionId, withRemoved);
  }

  /** `Status=closed` closes it; `Ttl` and `DateExpiry` reschedule it while it is live. */
  async update(service: ProxyService, sidOrName: string, params: TwilioParams): Promise<ProxySessionView> {
    const found = await this.get(service, sidOrName);
    const now = this.now();
    const status = params.oneOf('Status', ['open', 'in-progress', 'closed', 'failed', 'unknown'] as const);
    const ttl = params.integer('Ttl', { min: 0, max: MAX_TTL_SECONDS });
    const dateExpiry = this.dateExpiry(params, now);
    const state = sessionState(found, now);
    if (status === 'closed') {
      await this.close(service, found.session.id, null);
      return this.view(service, found.session.id);
    }
    if (status !== undefined && state.status === 'closed')
      throw new TwilioApiError(
        400,
        TWILIO_CODES.sessionNotActive,
        'A closed Session is not re-opened here: its participants may already be in other sessions on its number; create a new Session (docs/twilio-proxy-migration.md).',
      );
    if (status !== undefined && status !== 'open' && status !== 'in-progress')
      throw invalidParameter('Status', 'Status can only be set to closed.');
    if (ttl === undefined && dateExpiry === undefined) return found;
    if (state.status === 'closed') throw sessionClosed(found.session.id);
    const next = {
      ttl: ttl ?? found.session.ttl,
      dateExpiry: dateExpiry ?? found.session.dateExpiry,
    };
    await this.sessions.transaction(async (tx) => {
      await tx.lock(service.accountId, service.id, found.session.id);
      await tx.reschedule(found.session.id, {
        ...next,
        // A new DateExpiry is the hard limit; else it stays what it was.
        expiresAt: dateExpiry ?? found.session.expiresAt,
        at: now,
      });
    });
    return this.view(service, found.session.id);
  }

  /** Closes it (a second close changes nothing): the broker session's close, or the hold's release. */
  async close(service: ProxyService, id: string, reason: string | null): Promise<void> {
    const found = await this.byId(service, id);
    if (found.carrier?.status === 'active') await this.brokerSessions.close(service.accountId, id);
    const now = this.now();
    await this.sessions.transaction(async (tx) => {
      if (!(await tx.lock(service.accountId, service.id, id))) return;
      await tx.release(id);
      await tx.close(id, now, reason);
    });
  }

  /** Twilio's DELETE: closed, and gone from this API (its broker session stays in the broker's). */
  async delete(service: ProxyService, id: string): Promise<void> {
    await this.close(service, id, null);
    await this.sessions.transaction((tx) => tx.delete(id, this.now()));
  }

  /** Closes each of the Service's Sessions (its deletion). */
  async closeAll(service: ProxyService): Promise<void> {
    for (const id of await this.sessions.idsOf(service.id)) await this.close(service, id, null);
  }

  /** By the Session's sid or unique name. */
  async addParticipant(service: ProxyService, sessionSid: string, input: ParticipantInput): Promise<ProxyParticipant> {
    return this.addTo(service, (await this.get(service, sessionSid)).session.id, input);
  }

  private async addTo(service: ProxyService, sessionId: string, input: ParticipantInput): Promise<ProxyParticipant> {
    const found = await this.byId(service, sessionId);
    const identifier = await this.identifier(service.accountId, input.identifier, found.session.mode);
    const friendlyName = input.friendlyName ?? null;
    if (friendlyName !== null && friendlyName.length > MAX_FRIENDLY_NAME)
      throw invalidParameter('FriendlyName', `FriendlyName must be at most ${MAX_FRIENDLY_NAME} characters.`);
    const asked = await this.askedNumber(service, input);

    const claimed = await this.retried([identifier], () =>
      this.sessions.transaction(async (tx) => {
        const now = this.now();
        const view = await tx.lock(service.accountId, service.id, sessionId);
        if (!view) throw notFound(`/Sessions/${sessionId}`);
        if (sessionState(view, now).status === 'closed') throw sessionClosed(sessionId);
        const present = await tx.participants(sessionId);
        if (present.some((p) => p.identifier === identifier))
          throw new TwilioApiError(
            400,
            TWILIO_CODES.participantAlreadyInSession,
            `${identifier} is already a participant of this Session.`,
          );
        if (present.length >= 2) throw tooManyParticipants();
        if (present.length === 1) {
          if (view.carrier?.status !== 'pending') throw sessionClosed(sessionId);
          if (asked && asked.id !== view.carrier.proxyNumberId)
            throw new TwilioApiError(
              400,
              TWILIO_CODES.proxyIdentifierInUse,
              `Both participants of a Session share one proxy number: ask for ${view.carrier.proxyNumber} (the first participant's), or none.`,
            );
        }
        const participant = await tx.addParticipant({
          sessionId,
          identifier,
          friendlyName,
          requestedProxyNumberId: asked?.id ?? null,
          slot: present.length + 1,
          createdAt: now,
          updatedAt: now,
          deletedAt: null,
        });
        if (present.length === 0) await this.hold(tx, service, view.session, identifier, asked, now);
        return { participant, first: present[0] as ProxyParticipant | undefined, carrier: view.carrier, session: view.session };
      }),
    );
    if (!claimed.first) return claimed.participant;
    try {
      await this.pair(service, claimed.session, claimed.carrier!, claimed.first, claimed.participant);
    } catch (error) {
      await this.withdraw(service, claimed.session, claimed.carrier!, claimed.first, claimed.participant);
      throw error;
    }
    return claimed.participant;
  }

  /** Twilio's participant DELETE: from a full Session it ends the Session (the broker pairs two people, no fewer). */
  async removeParticipant(service: ProxyService, sessionSid: string, participantSid: string): Promise<void> {
    const found = await this.get(service, sessionSid);
    const participantId = uuidOfTwilioSid('KP', participantSid);
    const ended = await this.sessions.transaction(async (tx) => {
      const view = await tx.lock(service.accountId, service.id, found.session.id);
      const present = view ? await tx.participants(found.session.id) : [];
      const target = present.find((p) => p.id === participantId);
      if (!target) throw notFound(`/Participants/${participantSid}`);
      await tx.removeParticipant(target.id, this.now());
      if (present.length === 1) await tx.release(found.session.id);
      return present.length === 2;
    });
    if (ended) await this.close(service, found.session.id, 'participant-removed');
  }

  /** The Session as it is now, by id. */
  async view(service: ProxyService, id: string): Promise<ProxySessionView> {
    return this.byId(service, id);
  }

  private async byId(service: ProxyService, id: string): Promise<ProxySessionView> {
    const found = await this.sessions.find(service.accountId, service.id, id, null);
    if (!found) throw notFound(`/Sessions/${id}`);
    return found;
  }

  /** The first participant's hold: one of the Service's numbers, on the first provider that admits a session. */
  private async hold(
    tx: ProxySessionTransaction,
    service: ProxyService,
    session: ProxySession,
    identifier: string,
    asked: AskedNumber | null,
    now: Date,
  ) {
    for (const candidate of this.candidates(asked)) {
      const reservation = await tx.reserve({
        ...this.reservationBase(service, session, now),
        provider: candidate.provider.name,
        loadOrder: this.pool.loadOrder(candidate.provider.name),
        participants: [identifier],
        onlyNumberId: asked?.id ?? null,
        keepNumberId: null,
      });
      if (reservation) {
        this.pool.noteReserved(candidate.provider.name, reservation.proxyNumberId);
        return;
      }
    }
    throw asked ? askedNumberInUse(asked) : noAvailableProxy(identifier);
  }

  /**
   * The second participant: the pair reserved (keeping the hold's number where it can), bound where the
   * provider keeps sessions, activated; the next provider on a bind that fails.
   */
  private async pair(
    service: ProxyService,
    session: ProxySession,
    hold: CarryingSession,
    first: ProxyParticipant,
    second: ProxyParticipant,
  ): Promise<void> {
    const pinned = first.requestedProxyNumberId !== null || second.requestedProxyNumberId !== null;
    const participants = [first.identifier, second.identifier];
    let failedOver = false;
    const tried: string[] = [];
    for (const candidate of this.registry.candidates()) {
      const provider = candidate.provider.name;
      if (pinned && provider !== hold.provider) continue;
      const reservation = await this.repair(service, session, {
        provider,
        participants,
        onlyNumberId: pinned ? hold.proxyNumberId : null,
        keepNumberId: provider === hold.provider ? hold.proxyNumberId : null,
      });
      if (!reservation) {
        tried.push(`${provider}: no free number of the Service`);
        continue;
      }
      this.pool.noteReserved(provider, reservation.proxyNumberId);
      let bindingId: string | null = null;
      if (candidate.provider.keepsSessions) {
        const bound = await this.registry.call(provider, 'bind', candidate.probe, (p) =>
          p.bindProxy({ sessionId: session.id, proxyNumber: reservation.proxyNumber, participants: [first.identifier, second.identifier] }),
        );
        if (!bound.ok) {
          if (!bound.failure.countsAgainstProvider)
            throw new TwilioApiError(400, TWILIO_CODES.participantIdentifierInvalid, `Refused by the provider: ${bound.failure.reason}`);
          this.logger.warn(
            { sessionId: session.id, provider },
            `binding Proxy session ${session.id} on ${provider} failed (${bound.failure.reason}); trying the next provider`,
          );
          tried.push(`${provider}: ${bound.failure.reason}`);
          failedOver = true;
          continue;
        }
        bindingId = bound.value.bindingId;
      }
      const carrier = this.carrierOf(service, session, provider, reservation, participants, bindingId);
      if (!(await this.carriers.activate(carrier, sessionCreated(carrier)))) {
        if (bindingId) await this.brokerSessions.releaseBinding(carrier);
        throw new TwilioApiError(503, TWILIO_CODES.unavailable, 'The Session was closed while its second participant was being added.');
      }
      this.metrics.sessionsCreated.inc({ provider, failed_over: String(failedOver) });
      return;
    }
    throw new TwilioApiError(
      400,
      TWILIO_CODES.noAvailableProxy,
      `No available proxy number for ${first.identifier} and ${second.identifier} on any provider${tried.length ? ` (${tried.join('; ')})` : ''}.`,
    );
  }

  /**
   * In one transaction: the Session's current reservation dropped, the pair reserved on `provider`; rolled
   * back (the old reservation kept) when none of the Service's numbers there can take them. Null then.
   */
  private async repair(
    service: ProxyService,
    session: ProxySession,
    choice: { provider: string; participants: string[]; onlyNumberId: string | null; keepNumberId: string | null },
  ): Promise<ProxyReservation | null> {
    try {
      return await this.retried(choice.participants, () =>
        this.sessions.transaction(async (tx) => {
          await tx.release(session.id);
          const reservation = await tx.reserve({
            ...this.reservationBase(service, session, this.now()),
            ...choice,
            loadOrder: this.pool.loadOrder(choice.provider),
          });
          if (!reservation) throw new NoNumberOnProvider();
          return reservation;
        }),
      );
    } catch (error) {
      if (error instanceof NoNumberOnProvider) return null;
      throw error;
    }
  }

  /** The second participant could not be added: it goes, and the first keeps a hold (on its number where it can). */
  private async withdraw(
    service: ProxyService,
    session: ProxySession,
    hold: CarryingSession,
    first: ProxyParticipant,
    second: ProxyParticipant,
  ): Promise<void> {
    await this.sessions.transaction(async (tx) => {
      await tx.removeParticipant(second.id, this.now());
    });
    const restored = await this.repair(service, session, {
      provider: hold.provider,
      participants: [first.identifier],
      onlyNumberId: first.requestedProxyNumberId,
      keepNumberId: hold.proxyNumberId,
    });
    if (!restored)
      this.logger.warn({ sessionId: session.id }, `Proxy session ${session.id}: the first participant's hold could not be restored`);
  }

  private reservationBase(service: ProxyService, session: ProxySession, now: Date) {
    return {
      sessionId: session.id,
      accountId: service.accountId,
      serviceId: service.id,
      channels: modeChannels(session.mode),
      selection: service.numberSelectionBehavior,
      createdAt: session.createdAt,
      expiresAt: session.expiresAt,
      inactiveAt: firstDeadline(session),
      idleTtlSeconds: idleTtlOf(session),
      interceptUrl: service.interceptCallbackUrl,
      now,
    };
  }

  /** The broker session the pair's reservation becomes, as its activation and `session.created` carry it. */
  private carrierOf(
    service: ProxyService,
    session: ProxySession,
    provider: string,
    reservation: ProxyReservation,
    participants: string[],
    bindingId: string | null,
  ): Session {
    return Object.assign(new Session(), {
      id: session.id,
      accountId: service.accountId,
      channels: modeChannels(session.mode),
      status: 'active' as const,
      provider,
      proxyNumberId: reservation.proxyNumberId,
      proxyNumber: reservation.proxyNumber,
      participants,
      bindingId,
      callbackUrl: null,
      metadata: {},
      createdAt: session.createdAt,
      expiresAt: session.expiresAt,
      idleTtlSeconds: idleTtlOf(session),
      lastInteractionAt: null,
      inactiveAt: firstDeadline(session),
      expiredReason: null,
      uniqueName: null,
      interceptUrl: service.interceptCallbackUrl,
      endedAt: null,
      idempotencyKey: null,
      releasedAt: null,
      pendingUntil: firstDeadline(session),
    });
  }

  /** The providers a reservation may use: routing order, or only the asked number's provider. */
  private *candidates(asked: AskedNumber | null): Generator<RoutingCandidate> {
    for (const candidate of this.registry.candidates()) if (!asked || candidate.provider.name === asked.provider) yield candidate;
  }

  /** The participant's number in E.164, one the account may reach on the Session's channels; Twilio's 80404 if not. */
  private async identifier(accountId: string, written: string, mode: ProxySessionMode): Promise<string> {
    try {
      const [identifier] = await this.participantNumbers.read(accountId, [written]);
      await this.destinations.assertAllowed(accountId, modeChannels(mode).includes('sms') ? 'sms' : 'voice', [identifier]);
      return identifier;
    } catch (error) {
      if (!(error instanceof ProblemException)) throw error;
      const errors = error.extensions.errors as Array<{ message: string }> | undefined;
      throw new TwilioApiError(400, TWILIO_CODES.participantIdentifierInvalid, `Identifier: ${errors?.[0]?.message ?? error.detail}`);
    }
  }

  /** The Service's number a participant asked for by `ProxyIdentifier` (E.164) or `ProxyIdentifierSid` (PN…). */
  private async askedNumber(service: ProxyService, input: ParticipantInput): Promise<AskedNumber | null> {
    let number: { id: string } | { e164: string };
    if (input.proxyIdentifierSid !== undefined) {
      const id = uuidOfTwilioSid('PN', input.proxyIdentifierSid);
      if (!id)
        throw invalidParameter('ProxyIdentifierSid', 'ProxyIdentifierSid must be a phone number sid (PN followed by 32 hex digits).');
      number = { id };
    } else if (input.proxyIdentifier !== undefined) {
      if (!E164.test(input.proxyIdentifier)) throw invalidParameter('ProxyIdentifier', 'ProxyIdentifier must be an E.164 number.');
      number = { e164: input.proxyIdentifier };
    } else {
      return null;
    }
    const found = await this.serviceNumbers.find(service.id, number, this.now());
    if (!found)
      throw new TwilioApiError(
        400,
        TWILIO_CODES.proxyIdentifierNotOwned,
        `${input.proxyIdentifierSid ?? input.proxyIdentifier} is not one of this Service's phone numbers.`,
      );
    return { id: found.proxyNumberId, provider: found.provider, number: found.number };
  }

  private dateExpiry(params: TwilioParams, now: Date): Date | undefined {
    const at = params.dateTime('DateExpiry');
    if (at === undefined) return undefined;
    if (at.getTime() <= now.getTime()) throw invalidParameter('DateExpiry', 'DateExpiry must be in the future.');
    if (at.getTime() > now.getTime() + MAX_TTL_SECONDS * 1000)
      throw invalidParameter(
        'DateExpiry',
        `DateExpiry must be within ${MAX_TTL_SECONDS / 86_400} days: the broker ends every session by then.`,
      );
    return at;
  }

  /**
   * Runs `work` again when the pool rule's index refused a reservation for one of `people`: a concurrent one won
   * the number first, or a row of theirs past its deadline (not yet swept) still stood there, which is freed first.
   */
  private async retried<T>(people: string[], work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || violatedIndex(error) !== POOL_RULE_INDEX) throw error;
        await this.sessions.freeLapsed(people, this.now());
      }
    }
  }

  private now(): Date {
    return new Date(this.clock.now());
  }
}

/** One entry of a Session create's `Participants`: a JSON object with Twilio's names (either case). */
function participantInput(text: string, index: number): ParticipantInput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidParameter('Participants', `Participants[${index}] must be a JSON object, like {"Identifier":"+14155551212"}.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw invalidParameter('Participants', `Participants[${index}] must be a JSON object, like {"Identifier":"+14155551212"}.`);
  const fields = parsed as Record<string, unknown>;
  const read = (name: string): string | undefined => {
    const value = fields[name] ?? fields[name[0].toLowerCase() + name.slice(1)];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw invalidParameter('Participants', `Participants[${index}].${name} must be text.`);
    return value;
  };
  const identifier = read('Identifier');
  if (!identifier) throw invalidParameter('Participants', `Participants[${index}].Identifier is required.`);
  return {
    identifier,
    friendlyName: read('FriendlyName'),
    proxyIdentifier: read('ProxyIdentifier'),
    proxyIdentifierSid: read('ProxyIdentifierSid'),
  };
}

function tooManyParticipants(): TwilioApiError {
  return new TwilioApiError(400, TWILIO_CODES.tooManyParticipants, 'A Session may have at most 2 participants.');
}

function sessionClosed(id: string): TwilioApiError {
  return new TwilioApiError(400, TWILIO_CODES.sessionNotActive, `Session ${id} is closed.`);
}

function noAvailableProxy(identifier: string): TwilioApiError {
  return new TwilioApiError(400, TWILIO_CODES.noAvailableProxy, `No available proxy number in this Service for ${identifier}.`);
}

function askedNumberInUse(asked: AskedNumber): TwilioApiError {
  return new TwilioApiError(
    400,
    TWILIO_CODES.proxyIdentifierInUse,
    `Proxy identifier ${asked.number} is already in use with this identifier, or its provider is out of rotation.`,
  );
}
