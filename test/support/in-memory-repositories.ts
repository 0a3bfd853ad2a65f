/**
 * In-memory stand-ins for the session and interaction repositories, for the services' unit specs: they
 * keep the interfaces' promises (pending sessions hidden where the real one hides them, a transaction's
 * changes and events kept only when it completes) without PostgreSQL. Time is the `now` they are given.
 */
import { randomUUID } from 'node:crypto';
import type { PrecisePageCursor } from '../../apps/broker/src/common/pagination/page-cursor';
import type { SessionEventInput } from '../../apps/broker/src/notifications';
import type { PoolNumber } from '../../apps/broker/src/numbers/proxy-number.repository';
import type { Interaction } from '../../apps/broker/src/relay/interaction.entity';
import type {
  InteractionChange,
  InteractionOnPage,
  InteractionRepository,
  InteractionTransaction,
  NewInteraction,
  Recorded,
} from '../../apps/broker/src/relay/interaction.repository';
import type { Session } from '../../apps/broker/src/sessions/session.entity';
import type {
  DroppedReservation,
  RoutedSession,
  SessionPageQuery,
  SessionRepository,
  SessionTransaction,
} from '../../apps/broker/src/sessions/session.repository';

/** Runs `work` over copies of `rows` and `events`; they replace the originals only when it completes. */
async function transactionally<R, T>(
  rows: Map<string, R>,
  events: SessionEventInput[],
  work: (draft: Map<string, R>, staged: SessionEventInput[]) => Promise<T>,
): Promise<T> {
  const draft = new Map([...rows].map(([id, row]) => [id, { ...row }]));
  const staged: SessionEventInput[] = [];
  const result = await work(draft, staged);
  rows.clear();
  for (const [id, row] of draft) rows.set(id, row);
  events.push(...staged);
  return result;
}

export class InMemorySessionRepository implements SessionRepository {
  readonly sessions = new Map<string, Session>();
  /** Committed events, in order. */
  readonly events: SessionEventInput[] = [];
  /** Sessions whose participants were freed (their rows no longer hold the proxy number). */
  readonly freed = new Set<string>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** Account intercept URLs, by account id. */
  readonly accountInterceptUrls = new Map<string, string>();

  /** A reservation as the allocator makes one. */
  addPending(fields: Pick<Session, 'accountId' | 'provider' | 'channels' | 'participants' | 'proxyNumber'> & Partial<Session>): Session {
    const createdAt = this.now();
    const expiresAt = fields.expiresAt ?? new Date(createdAt.getTime() + 3600_000);
    const session: Session = {
      id: randomUUID(),
      status: 'pending',
      proxyNumberId: randomUUID(),
      bindingId: null,
      callbackUrl: null,
      metadata: {},
      createdAt,
      expiresAt,
      idleTtlSeconds: null,
      lastInteractionAt: null,
      inactiveAt: expiresAt,
      expiredReason: null,
      uniqueName: null,
      interceptUrl: null,
      endedAt: null,
      idempotencyKey: null,
      releasedAt: null,
      pendingUntil: null,
      numberHistory: [],
      ...fields,
    };
    this.sessions.set(session.id, session);
    return { ...session };
  }

  transaction<T>(work: (tx: SessionTransaction) => Promise<T>): Promise<T> {
    return transactionally(this.sessions, this.events, (draft, staged) =>
      work({
        lock: (accountId, id) => Promise.resolve(copy(draft.get(id), (s) => s.accountId === accountId)),
        lockExpired: (limit, now) =>
          Promise.resolve(
            [...draft.values()]
              .filter((s) => s.status === 'active' && s.inactiveAt <= now)
              .sort((a, b) => a.inactiveAt.getTime() - b.inactiveAt.getTime())
              .slice(0, limit)
              .map((s) => ({ ...s })),
          ),
        lockLapsedNamed: (accountId, uniqueName, now) =>
          Promise.resolve(
            [...draft.values()]
              .filter((s) => s.accountId === accountId && s.uniqueName === uniqueName && s.status === 'active' && s.inactiveAt <= now)
              .map((s) => ({ ...s })),
          ),
        end: (sessions) => {
          for (const s of sessions) {
            Object.assign(draft.get(s.id)!, { status: s.status, endedAt: s.endedAt, expiredReason: s.expiredReason });
            this.freed.add(s.id);
          }
          return Promise.resolve();
        },
        record: (event) => {
          staged.push(event);
          return Promise.resolve();
        },
      }),
    );
  }

  find(accountId: string, id: string): Promise<Session | null> {
    return Promise.resolve(copy(this.sessions.get(id), (s) => s.accountId === accountId));
  }

  exists(accountId: string, id: string): Promise<boolean> {
    return Promise.resolve(this.sessions.get(id)?.accountId === accountId);
  }

  findCreatedWith(accountId: string, idempotencyKey: string): Promise<Session | null> {
    const found = [...this.sessions.values()]
      .filter((s) => s.accountId === accountId && s.idempotencyKey === idempotencyKey && s.status !== 'pending')
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())[0];
    return Promise.resolve(copy(found));
  }

  page(query: SessionPageQuery): Promise<Session[]> {
    const now = query.now;
    const expired = (s: Session) => s.status === 'expired' || (s.status === 'active' && s.inactiveAt <= now);
    const rows = [...this.sessions.values()]
      .filter((s) => s.accountId === query.accountId && s.status !== 'pending')
      .filter((s) => query.uniqueName === undefined || s.uniqueName === query.uniqueName)
      .filter((s) => {
        if (query.status === 'active') return s.status === 'active' && s.inactiveAt > now;
        if (query.status === 'expired') return expired(s);
        return query.status === undefined || s.status === query.status;
      })
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id))
      .filter((s) => !query.before || before(s, query.before));
    return Promise.resolve(rows.slice(0, query.limit).map((s) => ({ ...s })));
  }

  activate(session: Session, event: SessionEventInput): Promise<boolean> {
    const stored = this.sessions.get(session.id);
    if (stored?.status !== 'pending') return Promise.resolve(false);
    Object.assign(stored, { status: 'active', bindingId: session.bindingId });
    this.events.push(event);
    return Promise.resolve(true);
  }

  markReleased(id: string): Promise<void> {
    const stored = this.sessions.get(id);
    if (stored && stored.releasedAt === null) stored.releasedAt = this.now();
    return Promise.resolve();
  }

  unreleased(limit: number): Promise<Session[]> {
    const rows = [...this.sessions.values()].filter((s) => (s.status === 'closed' || s.status === 'expired') && s.releasedAt === null);
    return Promise.resolve(rows.slice(0, limit).map((s) => ({ ...s })));
  }

  dropStaleReservations(before: Date): Promise<DroppedReservation[]> {
    const cutoff = before.getTime();
    const dropped = [...this.sessions.values()].filter((s) => s.status === 'pending' && (s.pendingUntil ?? s.createdAt).getTime() < cutoff);
    for (const s of dropped) this.sessions.delete(s.id);
    return Promise.resolve(dropped.map((s) => ({ id: s.id, provider: s.provider, proxyNumber: s.proxyNumber })));
  }

  dropPendingCreatedWith(accountId: string, idempotencyKey: string): Promise<DroppedReservation[]> {
    const dropped = [...this.sessions.values()].filter(
      (s) => s.status === 'pending' && s.accountId === accountId && s.idempotencyKey === idempotencyKey,
    );
    for (const s of dropped) this.sessions.delete(s.id);
    return Promise.resolve(dropped.map((s) => ({ id: s.id, provider: s.provider, proxyNumber: s.proxyNumber })));
  }

  findActiveFor(provider: string, proxyNumber: string, participant: string, now: Date): Promise<RoutedSession | null> {
    const found = [...this.sessions.values()].find(
      (s) =>
        s.provider === provider &&
        s.proxyNumber === proxyNumber &&
        s.participants.includes(participant) &&
        s.status === 'active' &&
        s.inactiveAt > now &&
        !this.freed.has(s.id),
    );
    if (!found) return Promise.resolve(null);
    return Promise.resolve({
      session: { ...found },
      interceptUrl: found.interceptUrl ?? this.accountInterceptUrls.get(found.accountId) ?? null,
    });
  }

  findMovedFrom(provider: string, proxyNumber: string, participant: string, now: Date): Promise<Session | null> {
    const found = [...this.sessions.values()].find(
      (s) =>
        s.numberHistory.some((n) => n.provider === provider && n.proxyNumber === proxyNumber) &&
        s.participants.includes(participant) &&
        s.status === 'active' &&
        s.inactiveAt > now,
    );
    return Promise.resolve(copy(found));
  }
}

export class InMemoryInteractionRepository implements InteractionRepository {
  readonly interactions = new Map<string, Interaction>();
  /** Committed events, in order. */
  readonly events: SessionEventInput[] = [];

  constructor(
    private readonly sessions: InMemorySessionRepository,
    /** The proxy numbers per provider (read as the numbers' repository reads them: `poolNumber`). */
    private readonly pool: ReadonlyMap<string, readonly string[]>,
    private readonly now: () => Date = () => new Date(),
    /** Proxy numbers dedicated to an account, and to which. */
    readonly dedicated = new Map<string, string>(),
  ) {}

  transaction<T>(work: (tx: InteractionTransaction) => Promise<T>): Promise<T> {
    return transactionally(this.interactions, this.events, (draft, staged) =>
      work({
        lockByRef: (provider, ref) =>
          Promise.resolve(
            copy([...draft.values()].find((i) => i.providerRef === ref && this.sessions.sessions.get(i.sessionId)?.provider === provider)),
          ),
        claimPending: (id) => Promise.resolve(copy(draft.get(id), (i) => i.status === 'pending')),
        update: (id, change: InteractionChange) => {
          Object.assign(draft.get(id)!, change, { updatedAt: this.now() });
          return Promise.resolve();
        },
        sessionOf: (interaction) => Promise.resolve({ ...this.sessions.sessions.get(interaction.sessionId)! }),
        record: (event) => {
          staged.push(event);
          return Promise.resolve();
        },
      }),
    );
  }

  get(id: string): Promise<Interaction> {
    const found = this.interactions.get(id);
    return found ? Promise.resolve({ ...found }) : Promise.reject(new Error(`no interaction ${id}`));
  }

  forSession(sessionId: string): Promise<Interaction[]> {
    return Promise.resolve([...this.interactions.values()].filter((i) => i.sessionId === sessionId).map((i) => ({ ...i })));
  }

  async pageForSession(sessionId: string, after: PrecisePageCursor | undefined, limit: number): Promise<InteractionOnPage[]> {
    // Dates here hold milliseconds; written as PostgreSQL would, with three more digits.
    const at = (i: Interaction) => `${i.createdAt.toISOString().slice(0, 23)}000Z`;
    const key = (position: PrecisePageCursor) => `${position.at} ${position.id}`;
    return (await this.forSession(sessionId))
      .map((interaction) => ({ interaction, position: { at: at(interaction), id: interaction.id } }))
      .sort((a, b) => key(a.position).localeCompare(key(b.position)))
      .filter((row) => after === undefined || key(row.position) > key(after))
      .slice(0, limit);
  }

  hasRef(provider: string, ref: string): Promise<boolean> {
    return Promise.resolve(
      [...this.interactions.values()].some((i) => i.providerRef === ref && this.sessions.sessions.get(i.sessionId)?.provider === provider),
    );
  }

  record(interaction: NewInteraction, now: Date, event?: (interaction: Interaction) => SessionEventInput): Promise<Recorded | null> {
    const again = [...this.interactions.values()].find(
      (i) =>
        i.id === interaction.id ||
        (i.sessionId === interaction.sessionId &&
          ((interaction.eventId !== null && i.providerEventId === interaction.eventId) ||
            (interaction.idempotencyKey !== null && i.idempotencyKey === interaction.idempotencyKey))),
    );
    if (again) return Promise.resolve({ interaction: { ...again }, repeat: true });
    const session = this.sessions.sessions.get(interaction.sessionId);
    if (!session || session.status !== 'active' || session.inactiveAt <= now) return Promise.resolve(null);
    if (interaction.activity) {
      session.lastInteractionAt = now;
      if (session.idleTtlSeconds !== null)
        session.inactiveAt = new Date(Math.min(session.expiresAt.getTime(), now.getTime() + session.idleTtlSeconds * 1000));
    }
    const { activity: _activity, eventId, ...fields } = interaction;
    const stored = this.add({
      ...fields,
      providerEventId: eventId,
      nextAttemptAt: interaction.status === 'pending' ? now : null,
      createdAt: now,
      updatedAt: now,
    });
    if (event) this.events.push(event({ ...stored }));
    return Promise.resolve({ interaction: { ...stored }, repeat: false });
  }

  findByIdempotencyKey(sessionId: string, idempotencyKey: string): Promise<Interaction | null> {
    return Promise.resolve(
      copy([...this.interactions.values()].find((i) => i.sessionId === sessionId && i.idempotencyKey === idempotencyKey)),
    );
  }

  recordEvent(event: SessionEventInput): Promise<void> {
    this.events.push(event);
    return Promise.resolve();
  }

  due(limit: number): Promise<string[]> {
    const now = this.now();
    const due = [...this.interactions.values()]
      .filter((i) => i.status === 'pending' && i.nextAttemptAt !== null && i.nextAttemptAt <= now)
      .sort((a, b) => a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime());
    return Promise.resolve(due.slice(0, limit).map((i) => i.id));
  }

  poolNumber(provider: string, number: string): Promise<PoolNumber | null> {
    if (!(this.pool.get(provider)?.includes(number) ?? false)) return Promise.resolve(null);
    return Promise.resolve({ accountId: this.dedicated.get(number) ?? null });
  }

  private add(
    fields: Pick<Interaction, 'sessionId' | 'channel' | 'from' | 'to' | 'status' | 'providerEventId'> & Partial<Interaction>,
  ): Interaction {
    const interaction: Interaction = {
      id: randomUUID(),
      text: null,
      providerRef: null,
      attempts: 0,
      nextAttemptAt: null,
      lastError: null,
      durationSec: null,
      idempotencyKey: null,
      createdAt: this.now(),
      updatedAt: this.now(),
      ...fields,
    };
    this.interactions.set(interaction.id, interaction);
    return interaction;
  }
}

function copy<T extends object>(row: T | undefined, visible: (row: T) => boolean = () => true): T | null {
  return row && visible(row) ? { ...row } : null;
}

function before(session: Session, cursor: { at: Date; id: string }): boolean {
  const t = session.createdAt.getTime();
  return t < cursor.at.getTime() || (t === cursor.at.getTime() && session.id < cursor.id);
}
