import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions, uuidArrayLiteral, PoolStatements } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { ENTITIES } from '../entities';
import { EventOutbox } from '../notifications';
import { sessionCreated } from './session-events';
import { Session } from './session.entity';
import { activeDraft, pendingSession } from './session-allocator';
import { activateWithEvent } from './session.repository';
import { SessionReservationRepository, type ReservationInput } from './session-reservation.repository';

const ACCOUNT = '00000000-0000-0000-0000-00000000000a';
const BARE_ACCOUNT = '00000000-0000-0000-0000-00000000000b';
const GROWING = ['sessions', 'session_participants', 'webhook_events', 'webhook_deliveries'];
/** A wake of the delivery workers that failed after the activation: not expected against a live database. */
const failOnWarning = (message: string) => {
  throw new Error(message);
};

let seq = 0;
function input(accountId = ACCOUNT, callbackUrl: string | null = null): ReservationInput {
  seq += 1;
  const pair: [string, string] = [`+23480300${String(seq * 2).padStart(5, '0')}`, `+23480300${String(seq * 2 + 1).padStart(5, '0')}`];
  return {
    sessionId: randomUUID(),
    accountId,
    provider: 'p',
    channels: ['sms'],
    sortedNumbers: [...pair].sort(),
    participants: pair,
    loadOrder: [],
    ttlSeconds: 3600,
    callbackUrl,
    metadata: {},
    idempotencyKey: null,
    participantLimit: 3,
    quarantineSeconds: 86_400,
    now: new Date(),
  };
}

// Migrations ReserveSessionFunction and ActivateSessionFunction: a create's two statements as functions whose plans
// are kept for a connection's life, so those plans must not come from statistics taken while the tables were
// nearly empty (a sequential scan kept while the tables grow).
describe('migrations ReserveSessionFunction and ActivateSessionFunction', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let stats: Client;
  const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 });

  /** Sequential scans of the growing tables so far, every backend's statistics flushed (each flushes when idle after asking). */
  const seqScans = async () => {
    await stats.query('SELECT pg_stat_force_next_flush()');
    const rows: Array<{ n: string }> = (
      await stats.query(`SELECT coalesce(sum(seq_scan), 0) AS n FROM pg_stat_user_tables WHERE relname = ANY($1)`, [GROWING])
    ).rows;
    return Number(rows[0].n);
  };
  /** A connection listening on webhook_delivery, and what it has heard (`channel payload`). */
  async function listenForWakes(): Promise<{ listener: Client; heard: string[] }> {
    const listener = new Client({ connectionString: db.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(`${n.channel} ${n.payload}`));
    await listener.query('LISTEN webhook_delivery');
    return { listener, heard };
  }
  const count = async (sql: string, id: string) => ((await dataSource.query(sql, [id])) as Array<{ n: number }>)[0].n;

  /** Reserves through `on` and returns the pending session. */
  async function reserve(on: DataSource, request = input()): Promise<Session> {
    const result = await new SessionReservationRepository(new PoolStatements(on), outbox).reserve(request);
    if (!result.reserved) throw new Error('nothing reserved');
    // Bound as the provider would: the activation takes the binding's id.
    return Object.assign(pendingSession(request, result.reserved), { bindingId: `b-${result.reserved.id}` });
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 2 })).initialize();
    stats = new Client({ connectionString: db.url });
    await stats.connect();
    await dataSource.query(
      `INSERT INTO accounts (id, name, default_callback_url) VALUES ($1, 'a', 'https://a.example/hook'), ($2, 'b', NULL)`,
      [ACCOUNT, BARE_ACCOUNT],
    );
    for (let n = 1; n <= 40; n++)
      await dataSource.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('p', $1)`, [`+2348000000${String(n).padStart(2, '0')}`]);
  });
  afterAll(async () => {
    await stats?.end();
    await dataSource?.destroy();
    await db?.drop();
  });

  it('sends the load order as the uuid[] it is: every id in order, none, or an error for an id that is not a uuid', async () => {
    const ids = (await dataSource.query(`SELECT id FROM proxy_numbers ORDER BY number DESC`)).map((r: { id: string }) => r.id);
    const read = async (literal: string) => (await stats.query<{ ids: string[] }>(`SELECT $1::uuid[] AS ids`, [literal])).rows[0].ids;
    expect(await read(uuidArrayLiteral(ids))).toEqual(ids);
    expect(await read(uuidArrayLiteral([]))).toEqual([]);
    await expect(read(uuidArrayLiteral([ids[0], 'not-a-uuid']))).rejects.toThrow(/uuid/);
  });

  it('activates a pending session once, with its event and its delivery to the callback URL, else the account’s, else none', async () => {
    const own = await reserve(dataSource, input(ACCOUNT, 'https://own.example/hook'));
    expect(await activateWithEvent(dataSource, outbox, own, sessionCreated(own), failOnWarning)).toBe(true);
    expect(await activateWithEvent(dataSource, outbox, own, sessionCreated(own), failOnWarning)).toBe(false);
    const [row] = (await dataSource.query(`SELECT status, binding_id FROM sessions WHERE id = $1`, [own.id])) as Array<{
      status: string;
      binding_id: string;
    }>;
    expect(row).toEqual({ status: 'active', binding_id: own.bindingId });
    expect(await count(`SELECT count(*)::int AS n FROM webhook_events WHERE session_id = $1 AND type = 'session.created'`, own.id)).toBe(1);
    const urls = async (id: string) =>
      (
        (await dataSource.query(
          `SELECT d.url FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.session_id = $1 AND d.status = 'pending'`,
          [id],
        )) as Array<{ url: string }>
      ).map((r) => r.url);
    expect(await urls(own.id)).toEqual(['https://own.example/hook']);

    const byAccount = await reserve(dataSource, input(ACCOUNT));
    expect(await activateWithEvent(dataSource, outbox, byAccount, sessionCreated(byAccount), failOnWarning)).toBe(true);
    expect(await urls(byAccount.id)).toEqual(['https://a.example/hook']);

    const nowhere = await reserve(dataSource, input(BARE_ACCOUNT));
    expect(await activateWithEvent(dataSource, outbox, nowhere, sessionCreated(nowhere), failOnWarning)).toBe(true);
    expect(await count(`SELECT count(*)::int AS n FROM webhook_events WHERE session_id = $1`, nowhere.id)).toBe(1);
    expect(await urls(nowhere.id)).toEqual([]);
  });

  // Migration ActivateSessionWakeAfterCommit: no NOTIFY inside the activation's transaction.
  it('wakes the delivery workers with a NOTIFY of its own after the activation, only when a delivery was recorded', async () => {
    const { listener, heard } = await listenForWakes();
    try {
      // The function alone records the delivery, says where to, and notifies nobody.
      const quiet = await reserve(dataSource, input(ACCOUNT, 'https://quiet.example/hook'));
      const { params } = outbox.sessionEventParameters(sessionCreated(quiet));
      const rows = (await dataSource.query(
        'SELECT * FROM broker_activate_session_wake_after($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
        [quiet.id, quiet.bindingId, ...params],
      )) as unknown[];
      expect(rows).toEqual([{ changed: true, delivery_url: 'https://quiet.example/hook' }]);
      expect(
        await count(
          `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.session_id = $1`,
          quiet.id,
        ),
      ).toBe(1);
      // Nowhere to deliver: nothing to wake.
      const nowhere = await reserve(dataSource, input(BARE_ACCOUNT));
      expect(await activateWithEvent(dataSource, outbox, nowhere, sessionCreated(nowhere), failOnWarning)).toBe(true);
      const woken = await reserve(dataSource, input(ACCOUNT, 'https://woken.example/hook'));
      expect(await activateWithEvent(dataSource, outbox, woken, sessionCreated(woken), failOnWarning)).toBe(true);
      // Notifications arrive in commit order: once the last one is here, any earlier one would be too.
      for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(heard).toEqual(['webhook_delivery https://woken.example/hook']);
    } finally {
      await listener.end();
    }
  });

  it('keeps neither the activation nor the event when the statement fails', async () => {
    const session = await reserve(dataSource, input(ACCOUNT, 'https://own.example/hook'));
    // An event for an account that does not exist: its foreign key fails the whole statement.
    const orphan = { ...sessionCreated(session), accountId: randomUUID() };
    await expect(activateWithEvent(dataSource, outbox, session, orphan, failOnWarning)).rejects.toThrow(/foreign key/);
    expect(await count(`SELECT count(*)::int AS n FROM sessions WHERE id = $1 AND status = 'pending'`, session.id)).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM webhook_events WHERE session_id = $1`, session.id)).toBe(0);
  });

  // Migration ReserveFirstFreeNumber: the numbers are put in order first and the first one free is taken.
  it('takes the first number free for both participants: dedicated to the account, then unranked, then in load order, then by number', async () => {
    const ids: Record<string, string> = {};
    for (const n of ['1', '2', '3', '4', '5']) {
      const [row] = (await dataSource.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('order', $1) RETURNING id`, [
        `+23481000000${n}`,
      ])) as Array<{ id: string }>;
      ids[n] = row.id;
    }
    await dataSource.query(`UPDATE proxy_numbers SET account_id = $1 WHERE id = $2`, [ACCOUNT, ids['5']]);
    await dataSource.query(`UPDATE proxy_numbers SET account_id = $1 WHERE id = $2`, [BARE_ACCOUNT, ids['4']]);
    const repository = new SessionReservationRepository(new PoolStatements(dataSource), outbox);
    const taken = async (participants: [string, string]) => {
      const result = await repository.reserve({
        ...input(),
        provider: 'order',
        participants,
        sortedNumbers: [...participants].sort(),
        loadOrder: [ids['3'], ids['2']],
        participantLimit: 10,
      });
      return result.reserved && Object.entries(ids).find(([, id]) => id === result.reserved!.proxyNumberId)![0];
    };
    const a = '+2348031111111';
    // 5 is this account's own; 4 is another account's and never taken; 1 is in no load order, so before 3 and 2.
    expect(await taken([a, '+2348032222221'])).toBe('5');
    expect(await taken([a, '+2348032222222'])).toBe('1');
    expect(await taken(['+2348032222223', a])).toBe('3');
    expect(await taken([a, '+2348032222224'])).toBe('2');
    expect(await taken([a, '+2348032222225'])).toBeNull();
    // A pair whose second participant holds the first numbers in order gets the next one.
    const b = '+2348033333331';
    expect(await taken([b, '+2348033333332'])).toBe('5');
    expect(await taken(['+2348033333333', b])).toBe('1');
    expect(await taken(['+2348032222221', '+2348033333334'])).toBe('1');
  });

  // Migration PickInLoadOrder: only the first (the participants' live rows + 1) candidates in order are sorted. The pair's
  // own live sessions are what the pool rule rules out there (another partner's numbers are held before the pick).
  it('takes the next number in load order for a pair live on every number before it, up to the last', async () => {
    const ids: string[] = [];
    for (let n = 10; n < 22; n++) {
      const [row] = (await dataSource.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('window', $1) RETURNING id`, [
        `+234820000${n}`,
      ])) as Array<{ id: string }>;
      ids.push(row.id);
    }
    // Least loaded first: the reverse of the numbers' order, so the number alone would pick otherwise.
    const loadOrder = [...ids].reverse();
    const repository = new SessionReservationRepository(new PoolStatements(dataSource), outbox);
    const pair: [string, string] = ['+2348034444440', '+2348035555550'];
    const picked: Array<string | null> = [];
    // After k creates the pair is live on the first k numbers in load order: the (k + 1)th is the one free for it.
    for (let k = 0; k <= ids.length; k++) {
      const result = await repository.reserve({
        ...input(),
        provider: 'window',
        participants: pair,
        sortedNumbers: [...pair].sort(),
        loadOrder,
        participantLimit: 50,
      });
      picked.push(result.reserved?.proxyNumberId ?? null);
    }
    expect(picked).toEqual([...loadOrder, null]);
  });

  // Migration CreateInOneStatement: on a provider that keeps no sessions, the reservation, the activation and the event are one.
  describe('broker_create_session', () => {
    /** Creates through the repository in one statement; the event is written before the number is known, as the allocator does. */
    async function create(on: DataSource, request = input(ACCOUNT, 'https://one.example/hook')) {
      // Every statement the repository sends, as the app's statement timer sees them.
      const statements: string[] = [];
      const repository = new SessionReservationRepository(
        new PoolStatements(on, (statement) => statements.push(String(statement))),
        outbox,
      );
      return { result: await repository.create(request, sessionCreated(activeDraft(request))), statements };
    }

    it('writes the session active with its participants, its event (the number filled in) and its delivery, in one statement', async () => {
      const { listener, heard } = await listenForWakes();
      try {
        const request = input(ACCOUNT, 'https://one.example/hook');
        const { result, statements } = await create(dataSource, request);
        expect(result.reserved).toMatchObject({ id: request.sessionId, createdAt: request.now });
        // The statement, then the wake as a statement of its own after the commit: no transaction around them.
        expect(statements.map((q) => /\/\* ([\w.]+) \*\//.exec(q)?.[1] ?? q)).toEqual(['session.create', 'delivery.wake']);
        const [session] = await dataSource.query(`SELECT status, binding_id, proxy_number, expires_at FROM sessions WHERE id = $1`, [
          request.sessionId,
        ]);
        expect(session).toEqual({
          status: 'active',
          binding_id: null,
          proxy_number: result.reserved!.proxyNumber,
          expires_at: result.reserved!.expiresAt,
        });
        expect(await count(`SELECT count(*)::int AS n FROM session_participants WHERE session_id = $1 AND active`, request.sessionId)).toBe(
          2,
        );
        const [event] = await dataSource.query(`SELECT type, data FROM webhook_events WHERE session_id = $1`, [request.sessionId]);
        expect(event.type).toBe('session.created');
        expect(event.data.session).toMatchObject({
          id: request.sessionId,
          status: 'active',
          proxyNumber: result.reserved!.proxyNumber,
          expiresAt: result.reserved!.expiresAt.toISOString(),
        });
        const [delivery] = await dataSource.query(
          `SELECT d.url, d.status FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.session_id = $1`,
          [request.sessionId],
        );
        expect(delivery).toEqual({ url: 'https://one.example/hook', status: 'pending' });
        for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect(heard).toEqual(['webhook_delivery https://one.example/hook']);
      } finally {
        await listener.end();
      }
    });

    it('writes nothing when nothing is free, and answers the refusal as the reservation does', async () => {
      const request = { ...input(ACCOUNT, 'https://one.example/hook'), provider: 'none' };
      const { result, statements } = await create(dataSource, request);
      expect(result).toEqual({ reserved: null, overLimit: null, quarantined: 0 });
      expect(statements).toHaveLength(1);
      expect(await count(`SELECT count(*)::int AS n FROM sessions WHERE id = $1`, request.sessionId)).toBe(0);
      expect(await count(`SELECT count(*)::int AS n FROM webhook_events WHERE session_id = $1`, request.sessionId)).toBe(0);
    });

    it('keeps neither the session nor its event when the event cannot be written', async () => {
      const request = input(ACCOUNT);
      const orphan = { ...sessionCreated(activeDraft(request)), accountId: randomUUID() };
      await expect(new SessionReservationRepository(new PoolStatements(dataSource), outbox).create(request, orphan)).rejects.toThrow(
        /foreign key/,
      );
      expect(await count(`SELECT count(*)::int AS n FROM sessions WHERE id = $1`, request.sessionId)).toBe(0);
    });

    // Migration CreateWithoutNestedCall: the reservation's statements are the create's own, not a call of
    // broker_reserve_session (a second function call set up on every create).
    it('reserves in its own body, calling no other function of ours', async () => {
      const client = new Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query(`SET track_functions = 'pl'`);
        const calls = async () => {
          await client.query('SELECT pg_stat_force_next_flush()');
          const rows: Array<{ name: string; calls: string }> = (
            await client.query(
              `SELECT funcname AS name, calls FROM pg_stat_user_functions WHERE funcname IN ('broker_create_session', 'broker_reserve_session')`,
            )
          ).rows;
          return Object.fromEntries(rows.map((r) => [r.name, Number(r.calls)]));
        };
        const before = await calls();
        const repository = new SessionReservationRepository(
          { query: async (sql, params) => (await client.query(sql, params)).rows },
          outbox,
        );
        for (let i = 0; i < 3; i++) {
          const request = input(ACCOUNT, 'https://one.example/hook');
          expect((await repository.create(request, sessionCreated(activeDraft(request)))).reserved).not.toBeNull();
        }
        const after = await calls();
        expect((after.broker_create_session ?? 0) - (before.broker_create_session ?? 0)).toBe(3);
        expect((after.broker_reserve_session ?? 0) - (before.broker_reserve_session ?? 0)).toBe(0);
      } finally {
        await client.end();
      }
    });

    it('creates on a fresh connection without reading the growing tables sequentially', async () => {
      const fresh = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 1 })).initialize();
      try {
        await fresh.query('SELECT pg_stat_force_next_flush()');
        const before = await seqScans();
        for (let i = 0; i < 10; i++) expect((await create(fresh)).result.reserved).not.toBeNull();
        await fresh.query('SELECT pg_stat_force_next_flush()');
        expect((await seqScans()) - before).toBe(0);
      } finally {
        await fresh.destroy();
      }
    });
  });

  // Migrations PickInLoadOrder and NoJitInCreateFunctions: PostgreSQL before 18 adds 1e10 to the cost of a plan node of
  // a disabled type it cannot avoid, past jit_above_cost, and compiles the statement on every execution
  // (test/postgres-jit.e2e-spec.ts watches it on Debian's PostgreSQL 15; the suite's own server is 18).
  it('turns JIT off in every function that turns a plan type off', async () => {
    const rows: Array<{ name: string; config: string[] }> = await dataSource.query(
      `SELECT p.proname AS name, p.proconfig AS config FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'enable\\_%=off')
        ORDER BY 1`,
    );
    expect(rows.map((r) => r.name)).toEqual([
      'broker_activate_session',
      'broker_activate_session_wake_after',
      'broker_create_session',
      'broker_reserve_session',
    ]);
    for (const row of rows) expect({ name: row.name, jitOff: row.config.includes('jit=off') }).toEqual({ name: row.name, jitOff: true });
  });

  it('reserves and activates on a fresh connection without reading the growing tables sequentially, after they were analyzed nearly empty', async () => {
    for (let i = 0; i < 3; i++) {
      const session = await reserve(dataSource);
      await activateWithEvent(dataSource, outbox, session, sessionCreated(session), failOnWarning);
    }
    await dataSource.query(
      'ANALYZE sessions; ANALYZE session_participants; ANALYZE proxy_numbers; ANALYZE webhook_events; ANALYZE webhook_deliveries',
    );

    const fresh = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 1 })).initialize();
    try {
      await fresh.query('SELECT pg_stat_force_next_flush()');
      const before = await seqScans();
      for (let i = 0; i < 10; i++) {
        const session = await reserve(fresh);
        expect(await activateWithEvent(fresh, outbox, session, sessionCreated(session), failOnWarning)).toBe(true);
      }
      await fresh.query('SELECT pg_stat_force_next_flush()');
      expect((await seqScans()) - before).toBe(0);
    } finally {
      await fresh.destroy();
    }
  });
});
