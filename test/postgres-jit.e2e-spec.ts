/**
 * A create's statements on Debian's PostgreSQL 15, the version of the HA layout (deploy/ha), with JIT as it ships
 * (on, LLVM installed). Before 18, PostgreSQL prices a plan node of a type a function turned off (`enable_nestloop =
 * off`, `enable_seqscan = off`) at 1e10 more when it cannot avoid one, which is past `jit_above_cost`: such a
 * statement was compiled with LLVM on every execution, 1.5 s a create (migration PickInLoadOrder). The suite's own
 * server is PostgreSQL 18, whose planner counts disabled nodes apart from the cost, so only this server shows it.
 * auto_explain logs the plan of every statement the create's functions run; none may carry a `JIT:` section.
 */
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { systemClock } from '@app/clock';
import { brokerDataSourceOptions, PoolStatements } from '@app/database';
import { ENTITIES } from '../apps/broker/src/entities';
import { EventOutbox } from '../apps/broker/src/notifications';
import { prepareDatabase } from '../apps/broker/src/prepare-database';
import { activeDraft } from '../apps/broker/src/sessions/session-allocator';
import { sessionCreated } from '../apps/broker/src/sessions/session-events';
import { SessionReservationRepository, type ReservationInput } from '../apps/broker/src/sessions/session-reservation.repository';
import { AUTH_ENV, createSession, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { startSystemPostgres, type SystemPostgres } from './support/system-postgres';

jest.setTimeout(300_000);

const ACCOUNT = '00000000-0000-0000-0000-0000000000aa';
/** Plans of nested statements, logged as they end (auto_explain at 0 ms). */
const EXPLAIN_EVERYTHING = {
  session_preload_libraries: "'auto_explain'",
  'auto_explain.log_min_duration': '0',
  'auto_explain.log_nested_statements': 'on',
};

/** The plans auto_explain logged since `from` (an offset in the server's log), one string each. */
function plansSince(postgres: SystemPostgres, from: number): string[] {
  return postgres
    .log()
    .slice(from)
    .split(/\n(?=\S)/)
    .filter((entry) => /LOG: {2}duration: [\d.]+ ms {2}plan:/.test(entry));
}

describe("a create's statements on Debian's PostgreSQL 15 (JIT on)", () => {
  let postgres: SystemPostgres;
  let broker: BrokerHarness;

  beforeAll(async () => {
    postgres = await startSystemPostgres({ major: 15 });
    await postgres.admin('CREATE DATABASE broker');
    const [server] = await postgres.admin<{ jit: boolean; version: number }>(
      `SELECT pg_jit_available() AS jit, current_setting('server_version_num')::int AS version`,
    );
    // Without JIT, or on 18, nothing here could fail: say so rather than pass.
    if (!server.jit || server.version >= 180000) throw new Error(`this server cannot JIT-compile a create: ${JSON.stringify(server)}`);
    await prepareDatabase(postgres.url('broker'));
    for (const [name, value] of Object.entries(EXPLAIN_EVERYTHING)) await postgres.admin(`ALTER DATABASE broker SET ${name} = ${value}`);
    broker = await startBroker({ ...AUTH_ENV, SESSION_PARTICIPANT_LIMIT: '20' }, { db: postgres.database('broker') });
  }, 1_200_000);

  afterAll(async () => {
    await broker?.close();
    await postgres?.stop();
  });

  it('reserves and activates (a provider that binds) without JIT in any plan', async () => {
    const from = postgres.log().length;
    // A participant in several sessions, so the pool rule turns numbers away and the pick reads past the first.
    const regular = '+2348031000000';
    for (let i = 1; i <= 6; i++)
      await createSession(broker.url, sessionBody([regular, `+23480310000${String(i).padStart(2, '0')}`])).expect(201);
    const plans = plansSince(postgres, from);
    expect(plans.some((p) => p.includes('broker_reserve_session'))).toBe(true);
    expect(plans.some((p) => p.includes('broker_activate_session_wake_after'))).toBe(true);
    expect(plans.filter((p) => p.includes('JIT:'))).toEqual([]);
  });

  it('creates in one statement (a provider that keeps no sessions) without JIT in any plan', async () => {
    const dataSource = await new DataSource(
      brokerDataSourceOptions({ url: postgres.url('broker'), entities: ENTITIES, poolSize: 1 }),
    ).initialize();
    try {
      await dataSource.query(`INSERT INTO accounts (id, name) VALUES ($1, 'one statement')`, [ACCOUNT]);
      const numbers: Array<{ id: string }> = await dataSource.query(
        `INSERT INTO proxy_numbers (provider, number) SELECT 'vendor', '+23480200000' || lpad(n::text, 2, '0') FROM generate_series(1, 20) n RETURNING id`,
      );
      const outbox = new EventOutbox(systemClock, { giveUpAfterMs: 3_600_000 });
      const from = postgres.log().length;
      for (let i = 1; i <= 3; i++) {
        const participants: [string, string] = ['+2348032000000', `+23480320000${String(i).padStart(2, '0')}`];
        const request: ReservationInput = {
          sessionId: randomUUID(),
          accountId: ACCOUNT,
          provider: 'vendor',
          channels: ['sms'],
          sortedNumbers: [...participants].sort(),
          participants,
          loadOrder: numbers.map((n) => n.id).reverse(),
          ttlSeconds: 3600,
          callbackUrl: null,
          metadata: {},
          idempotencyKey: null,
          participantLimit: 3,
          quarantineSeconds: 0,
          now: new Date(),
        };
        const result = await new SessionReservationRepository(new PoolStatements(dataSource), outbox).create(
          request,
          sessionCreated(activeDraft(request)),
        );
        expect(result.reserved).not.toBeNull();
      }
      const plans = plansSince(postgres, from);
      expect(plans.some((p) => p.includes('broker_create_session'))).toBe(true);
      expect(plans.filter((p) => p.includes('JIT:'))).toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });
});
