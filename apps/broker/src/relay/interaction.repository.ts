/**
 * The SQL of relayed calls and messages (interactions). An SMS relay's interaction is its durable outbox
 * row; a change to an interaction and the event it causes are written in one transaction (`transaction`).
 */
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { DeliveryWakes, EventOutbox, transactionThenWake, type SessionEventInput, type WakeWarning } from '../notifications';
import { preciseInstantSql, type PrecisePageCursor } from '../common/pagination/page-cursor';
import { Session } from '../sessions/session.entity';
import { Interaction } from './interaction.entity';

/** The columns of an interaction that change after it is recorded. */
export type InteractionChange = Partial<
  Pick<Interaction, 'status' | 'attempts' | 'nextAttemptAt' | 'lastError' | 'providerRef' | 'durationSec'>
>;

export interface InboundSms {
  readonly sessionId: string;
  readonly from: string;
  readonly to: string;
  readonly text: string;
  /** The provider's id of the inbound webhook: the same one twice is one interaction. */
  readonly eventId: string;
}

export interface BridgedCall {
  readonly sessionId: string;
  readonly from: string;
  readonly to: string;
  readonly eventId: string;
  readonly callId: string;
}

/** An interaction of a page, with where it stands in the list's order (what the next page's cursor says). */
export interface InteractionOnPage {
  readonly interaction: Interaction;
  readonly position: PrecisePageCursor;
}

/** What one transaction can do; its changes and events commit together or not at all. */
export interface InteractionTransaction {
  /** The interaction the provider knows by `ref` (its message or call id) on `provider`, row-locked; null when none. */
  lockByRef(provider: string, ref: string): Promise<Interaction | null>;
  /** The interaction if it is still pending, row-locked; null when it is not, or another replica holds it. */
  claimPending(id: string): Promise<Interaction | null>;
  update(id: string, change: InteractionChange): Promise<void>;
  /** The session the interaction belongs to. */
  sessionOf(interaction: Interaction): Promise<Session>;
  /** Records an event in the outbox, in this transaction; the delivery workers are woken once it has committed. */
  record(event: SessionEventInput): Promise<void>;
}

/** What the relay needs from storage (PostgresInteractionRepository; specs use a fake). */
export abstract class InteractionRepository {
  abstract transaction<T>(work: (tx: InteractionTransaction) => Promise<T>): Promise<T>;
  abstract get(id: string): Promise<Interaction>;
  /** The session's interactions, oldest first. */
  abstract forSession(sessionId: string): Promise<Interaction[]>;
  /** Up to `limit` of the session's interactions, oldest first, after `after` in that order (a page of the API's list). */
  abstract pageForSession(sessionId: string, after: PrecisePageCursor | undefined, limit: number): Promise<InteractionOnPage[]>;
  /** Whether an interaction on `provider` is known by this provider message or call id. */
  abstract hasRef(provider: string, ref: string): Promise<boolean>;
  /** A pending SMS relay, due now; a webhook delivered twice gives back the interaction of the first. */
  abstract recordSms(sms: InboundSms): Promise<Interaction>;
  /** A bridged call; a webhook delivered twice records it once. */
  abstract recordCall(call: BridgedCall): Promise<void>;
  /** Up to `limit` pending relays whose next attempt is due, longest due first. */
  abstract due(limit: number): Promise<string[]>;
  /** Whether `number` is one of the proxy numbers `provider` holds. */
  abstract isPoolNumber(provider: string, number: string): Promise<boolean>;
}

@Injectable()
export class PostgresInteractionRepository implements InteractionRepository {
  private readonly logger = new Logger(PostgresInteractionRepository.name);
  private readonly warn: WakeWarning = (message) => this.logger.warn(message);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: EventOutbox,
  ) {}

  transaction<T>(work: (tx: InteractionTransaction) => Promise<T>): Promise<T> {
    return transactionThenWake(this.dataSource, this.warn, (manager, wakes) =>
      work(new PostgresInteractionTransaction(manager, this.outbox, wakes)),
    );
  }

  get(id: string): Promise<Interaction> {
    return this.dataSource.getRepository(Interaction).findOneByOrFail({ id });
  }

  forSession(sessionId: string): Promise<Interaction[]> {
    return this.dataSource.getRepository(Interaction).find({ where: { sessionId }, order: { createdAt: 'ASC' } });
  }

  async pageForSession(sessionId: string, after: PrecisePageCursor | undefined, limit: number): Promise<InteractionOnPage[]> {
    const query = this.dataSource
      .getRepository(Interaction)
      .createQueryBuilder('i')
      .addSelect(preciseInstantSql('i.created_at'), 'position_at')
      .where('i.session_id = :sessionId', { sessionId })
      .orderBy('i.created_at', 'ASC')
      .addOrderBy('i.id', 'ASC')
      .limit(limit);
    if (after) query.andWhere('(i.created_at, i.id) > (CAST(:at AS timestamptz), CAST(:id AS uuid))', { at: after.at, id: after.id });
    const { entities, raw } = await query.getRawAndEntities<{ position_at: string }>();
    return entities.map((interaction, i) => ({ interaction, position: { at: raw[i].position_at, id: interaction.id } }));
  }

  async hasRef(provider: string, ref: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM interactions i JOIN sessions s ON s.id = i.session_id WHERE i.provider_ref = $1 AND s.provider = $2 LIMIT 1`,
      [ref, provider],
    );
    return rows.length > 0;
  }

  async recordSms(sms: InboundSms): Promise<Interaction> {
    const inserted = await this.dataSource.query<Array<{ id: string }>>(
      `INSERT INTO interactions (session_id, channel, from_number, to_number, text, status, provider_event_id, attempts, next_attempt_at)
       VALUES ($1, 'sms', $2, $3, $4, 'pending', $5, 0, now())
       ON CONFLICT (session_id, provider_event_id) WHERE provider_event_id IS NOT NULL DO NOTHING
       RETURNING id`,
      [sms.sessionId, sms.from, sms.to, sms.text, sms.eventId],
    );
    const interactions = this.dataSource.getRepository(Interaction);
    if (inserted.length === 0) return interactions.findOneByOrFail({ sessionId: sms.sessionId, providerEventId: sms.eventId });
    return interactions.findOneByOrFail({ id: inserted[0].id });
  }

  async recordCall(call: BridgedCall): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO interactions (session_id, channel, from_number, to_number, status, provider_event_id, provider_ref)
       VALUES ($1, 'voice', $2, $3, 'bridged', $4, $5)
       ON CONFLICT (session_id, provider_event_id) WHERE provider_event_id IS NOT NULL DO NOTHING`,
      [call.sessionId, call.from, call.to, call.eventId, call.callId],
    );
  }

  async due(limit: number): Promise<string[]> {
    const rows = await this.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM interactions WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  async isPoolNumber(provider: string, number: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>('SELECT 1 FROM proxy_numbers WHERE provider = $1 AND number = $2', [
      provider,
      number,
    ]);
    return rows.length > 0;
  }
}

class PostgresInteractionTransaction implements InteractionTransaction {
  constructor(
    private readonly manager: EntityManager,
    private readonly outbox: EventOutbox,
    private readonly wakes: DeliveryWakes,
  ) {}

  lockByRef(provider: string, ref: string): Promise<Interaction | null> {
    return this.manager
      .getRepository(Interaction)
      .createQueryBuilder('i')
      .innerJoin(Session, 's', 's.id = i.sessionId')
      .where('i.providerRef = :ref AND s.provider = :provider', { ref, provider })
      .setLock('pessimistic_write')
      .getOne();
  }

  claimPending(id: string): Promise<Interaction | null> {
    return this.manager
      .getRepository(Interaction)
      .createQueryBuilder('i')
      .where(`i.id = :id AND i.status = 'pending'`, { id })
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .getOne();
  }

  async update(id: string, change: InteractionChange): Promise<void> {
    await this.manager.update(Interaction, { id }, change);
  }

  sessionOf(interaction: Interaction): Promise<Session> {
    return this.manager.getRepository(Session).findOneByOrFail({ id: interaction.sessionId });
  }

  async record(event: SessionEventInput): Promise<void> {
    await this.outbox.record(this.manager, event, this.wakes);
  }
}
