/**
 * The SQL of relayed calls and messages (interactions). An SMS relay's interaction is its durable outbox
 * row; a change to an interaction and the event it causes are written in one transaction (`transaction`).
 * Recording an interaction on one of a session's channels is also the session's activity: the same
 * statement moves its last interaction and, with an idle TTL, its inactiveAt (and its participant rows'
 * copy), never past its expiresAt, and only while the session is live at the broker's `now`.
 */
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { DeliveryWakes, EventOutbox, transactionThenWake, type SessionEventInput, type WakeWarning } from '../notifications';
import { preciseInstantSql, type PrecisePageCursor } from '../common/pagination/page-cursor';
import type { Channel } from '../numbers/proxy-number.entity';
import { Session } from '../sessions/session.entity';
import { Interaction, type InteractionStatus } from './interaction.entity';

/** The columns of an interaction that change after it is recorded. */
export type InteractionChange = Partial<
  Pick<Interaction, 'status' | 'attempts' | 'nextAttemptAt' | 'lastError' | 'providerRef' | 'durationSec'>
>;

/** An interaction to record on a session. */
export interface NewInteraction {
  /** Chosen by the caller: an inbound one's is derived from its webhook (interactionIdFor), so a repeat has the same. */
  readonly id: string;
  readonly sessionId: string;
  readonly channel: Channel;
  readonly from: string;
  readonly to: string;
  readonly text: string | null;
  /** `pending` (an SMS to relay, due now), `bridged`, `blocked` or `out-of-session`. */
  readonly status: Extract<InteractionStatus, 'pending' | 'bridged' | 'blocked' | 'out-of-session'>;
  /** The provider's id of the inbound webhook: the same one twice is one interaction. */
  readonly eventId: string | null;
  /** The provider's id for a bridged call. */
  readonly providerRef: string | null;
  /** The Idempotency-Key of the app's message: the same one twice is one interaction. */
  readonly idempotencyKey: string | null;
  /** Why it was blocked. */
  readonly lastError: string | null;
  /** Whether it is the session's activity (every interaction on one of its channels is; one on another channel is not). */
  readonly activity: boolean;
}

/** What `record` answers: the interaction, and whether an earlier delivery (same id, webhook or key) had recorded it. */
export interface Recorded {
  readonly interaction: Interaction;
  readonly repeat: boolean;
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
  /**
   * Records the interaction at `now` (with `event`, if given, in the same transaction) while its session is
   * live then, moving the session's activity when it is activity. One recorded already with its id, its
   * webhook or its Idempotency-Key is answered instead (and no event is recorded again). Null: the session was
   * no longer live at `now`, and nothing was recorded.
   */
  abstract record(
    interaction: NewInteraction,
    now: Date,
    event?: (interaction: Interaction) => SessionEventInput,
  ): Promise<Recorded | null>;
  /** The app's message made with this Idempotency-Key on the session, if any. */
  abstract findByIdempotencyKey(sessionId: string, idempotencyKey: string): Promise<Interaction | null>;
  /** Records an account's event that no interaction row goes with (`interaction.out_of_session` on its dedicated number). */
  abstract recordEvent(event: SessionEventInput): Promise<void>;
  /** Up to `limit` pending relays whose next attempt is due, longest due first. */
  abstract due(limit: number): Promise<string[]>;
}

/**
 * The insert and the session's activity, in one statement: the row is written only while its session is active
 * and before its inactiveAt at `$12` (so a session past its idle deadline or its expiresAt is not revived, on any
 * replica, whether or not the sweeper has run); when written, and when it is activity (`$13`), the session's last
 * interaction is `$12` and, with an idle TTL, its inactiveAt `$12` + that TTL (never past expiresAt), copied to its
 * active participant rows. A repeat (same id, webhook or key) writes nothing: ON CONFLICT DO NOTHING, with no
 * target, covers the primary key and both unique indexes.
 */
const RECORD_SQL = `/* interaction.record */
  WITH ins AS (
    INSERT INTO interactions (id, session_id, channel, from_number, to_number, text, status, provider_event_id, provider_ref,
                              idempotency_key, last_error, attempts, next_attempt_at, created_at, updated_at)
    SELECT $1, s.id, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, CASE WHEN $7 = 'pending' THEN $12::timestamptz END, $12, $12
      FROM sessions s WHERE s.id = $2 AND s.status = 'active' AND s.inactive_at > $12
    ON CONFLICT DO NOTHING
    RETURNING id
  ), touched AS (
    UPDATE sessions s SET last_interaction_at = $12,
           inactive_at = CASE WHEN s.idle_ttl_seconds IS NULL THEN s.inactive_at
                              ELSE least(s.expires_at, $12::timestamptz + make_interval(secs => s.idle_ttl_seconds)) END
     WHERE s.id = $2 AND $13 AND s.status = 'active' AND EXISTS (SELECT 1 FROM ins)
     RETURNING s.inactive_at, s.idle_ttl_seconds
  ), moved AS (
    UPDATE session_participants sp SET expires_at = t.inactive_at
      FROM touched t WHERE sp.session_id = $2 AND sp.active AND t.idle_ttl_seconds IS NOT NULL
  )
  SELECT id FROM ins`;

/**
 * The session `s` is on `provider`, or was until a rescue moved it (apps/broker/src/rescue): a status webhook of a
 * text relayed or a call bridged there before the move still finds its interaction.
 */
const ON_PROVIDER = (provider: string) =>
  `(s.provider = ${provider} OR EXISTS (SELECT 1 FROM session_moves m WHERE m.session_id = s.id AND m.status = 'moved' AND m.from_provider = ${provider}))`;

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
      `SELECT 1 FROM interactions i JOIN sessions s ON s.id = i.session_id WHERE i.provider_ref = $1 AND ${ON_PROVIDER('$2')} LIMIT 1`,
      [ref, provider],
    );
    return rows.length > 0;
  }

  async record(interaction: NewInteraction, now: Date, event?: (interaction: Interaction) => SessionEventInput): Promise<Recorded | null> {
    const params = [
      interaction.id,
      interaction.sessionId,
      interaction.channel,
      interaction.from,
      interaction.to,
      interaction.text,
      interaction.status,
      interaction.eventId,
      interaction.providerRef,
      interaction.idempotencyKey,
      interaction.lastError,
      now,
      interaction.activity,
    ];
    if (!event) {
      const inserted = await this.dataSource.query<Array<{ id: string }>>(RECORD_SQL, params);
      if (inserted.length > 0) return { interaction: await this.get(inserted[0].id), repeat: false };
      return this.recorded(this.dataSource.manager, interaction);
    }
    return transactionThenWake(this.dataSource, this.warn, async (manager, wakes) => {
      const inserted = await manager.query<Array<{ id: string }>>(RECORD_SQL, params);
      if (inserted.length === 0) return this.recorded(manager, interaction);
      const stored = await manager.getRepository(Interaction).findOneByOrFail({ id: inserted[0].id });
      await this.outbox.record(manager, event(stored), wakes);
      return { interaction: stored, repeat: false };
    });
  }

  /** The interaction a repeat of `interaction` was recorded as, or null (none was, and its session was not live). */
  private async recorded(manager: EntityManager, interaction: NewInteraction): Promise<Recorded | null> {
    const interactions = manager.getRepository(Interaction);
    const { id, sessionId, eventId, idempotencyKey } = interaction;
    const earlier = await interactions.findOne({
      where: [
        { id },
        ...(eventId !== null ? [{ sessionId, providerEventId: eventId }] : []),
        ...(idempotencyKey !== null ? [{ sessionId, idempotencyKey }] : []),
      ],
    });
    return earlier ? { interaction: earlier, repeat: true } : null;
  }

  findByIdempotencyKey(sessionId: string, idempotencyKey: string): Promise<Interaction | null> {
    return this.dataSource.getRepository(Interaction).findOneBy({ sessionId, idempotencyKey });
  }

  async recordEvent(event: SessionEventInput): Promise<void> {
    await transactionThenWake(this.dataSource, this.warn, async (manager, wakes) => {
      await this.outbox.record(manager, event, wakes);
    });
  }

  async due(limit: number): Promise<string[]> {
    const rows = await this.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM interactions WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.id);
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
      .where(`i.providerRef = :ref AND ${ON_PROVIDER(':provider')}`, { ref, provider })
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
