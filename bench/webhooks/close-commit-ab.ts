/**
 * The commit behaviour of a session close with a callback URL, without HTTP, the provider's unbind or the
 * delivery workers: each build's own `PostgresSessionRepository.transaction` runs what `SessionsService.close`
 * runs in it (lock the session, end it, record `session.closed` and its delivery), `--connections` at a time,
 * on one throwaway PostgreSQL (durable settings). This build against the build in `--against=DIR`, rounds
 * interleaved in one run, the order alternating by round; one LISTEN connection on `webhook_delivery` (as a
 * delivery worker's) counts the wakes. Made for issue #19: this build wakes the workers with a NOTIFY after the
 * close's commit, the code before sent it inside the transaction, where it holds PostgreSQL's NOTIFY lock
 * through the commit's WAL flush.
 *
 * Per round and build: closes per second, PostgreSQL's CPU per close (/proc: the postmaster and every
 * backend), this process's CPU per close, and the wakes heard per close.
 *
 * Usage (after `npm run build` here and in DIR, and the bench's tsc):
 *   node dist/bench/bench/webhooks/close-commit-ab.js --against=DIR [--rounds=6 --amount=3000 --connections=16]
 * Prints one JSON object.
 */
import 'reflect-metadata';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { ownCpuMs, parentPid, postgresCpuMs } from '../support/cpu';
import { resetSessions, withClient } from '../support/pool-rule';
import { startDatabase } from '../support/stack';
import { median, numberArg, ratio, round } from '../support/stats';
import { prepareDatabase } from '../../apps/broker/src/prepare-database';
import { RESERVE_SQL } from '../../apps/broker/src/sessions/session-reservation.repository';
import { reserveParams } from '../support/reserve-params';

const ROUNDS = numberArg('rounds', 6);
const AMOUNT = numberArg('amount', 3000);
const CONNECTIONS = numberArg('connections', 16);
const AGAINST = process.argv.find((a) => a.startsWith('--against='))?.slice(10);
const ACCOUNT = '00000000-0000-0000-0000-0000000000c1';
const CALLBACK = 'https://hooks.example/closed';

/** What the bench needs of a build's session repository (its compiled code, loaded from its own dist). */
interface Build {
  name: string;
  close(id: string): Promise<void>;
  destroy(): Promise<void>;
}

/** Loads the build in `dir` (its dist and its node_modules) and connects it with a pool of `CONNECTIONS`. */
async function loadBuild(name: string, dir: string, url: string): Promise<Build> {
  const req = createRequire(join(dir, 'package.json'));
  const at = (path: string) => req(join(dir, 'dist', path)) as Record<string, unknown>;
  const { DataSource } = req('typeorm') as typeof import('typeorm');
  const { brokerDataSourceOptions } = at('libs/database/src/index.js') as typeof import('@app/database');
  const { ENTITIES } = at('apps/broker/src/entities.js') as typeof import('../../apps/broker/src/entities');
  const { EventOutbox } = at(
    'apps/broker/src/notifications/events/event-outbox.js',
  ) as typeof import('../../apps/broker/src/notifications/events/event-outbox');
  const { PostgresSessionRepository } = at(
    'apps/broker/src/sessions/session.repository.js',
  ) as typeof import('../../apps/broker/src/sessions/session.repository');
  const { sessionEnded } = at(
    'apps/broker/src/sessions/session-events.js',
  ) as typeof import('../../apps/broker/src/sessions/session-events');
  const dataSource = await new DataSource(
    brokerDataSourceOptions({ url, entities: ENTITIES, poolSize: CONNECTIONS, applicationName: `close-${name}` }),
  ).initialize();
  const repository = new PostgresSessionRepository(
    dataSource,
    new EventOutbox({ now: () => Date.now() }, { giveUpAfterMs: 72 * 3600_000 }),
  );
  return {
    name,
    // SessionsService.close's transaction.
    close: (id) =>
      repository.transaction(async (tx) => {
        const session = await tx.lock(ACCOUNT, id);
        if (!session || session.status !== 'active') throw new Error(`session ${id} is not active`);
        const ended = { ...session, status: 'closed' as const, endedAt: new Date() };
        await tx.end([ended]);
        await tx.record(sessionEnded(ended, 'closed'));
      }),
    destroy: () => dataSource.destroy(),
  };
}

/** Runs `task(i, worker)` for i in [0, amount) over `connections` workers; returns the elapsed ms. */
async function spread(amount: number, connections: number, task: (i: number, worker: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, worker) => {
      while (next < amount) await task(next++, worker);
    }),
  );
  return performance.now() - started;
}

let seq = 0;
/** `amount` active sessions with the callback URL, reserved by the broker's own statement. */
async function seed(url: string, amount: number): Promise<string[]> {
  await resetSessions(url);
  const clients = await Promise.all(
    Array.from({ length: 8 }, async () => {
      const c = new Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  const ids: string[] = [];
  try {
    await spread(amount, clients.length, async (_, worker) => {
      seq += 2;
      const pair: [string, string] = [`+234806${String(seq).padStart(7, '0')}`, `+234806${String(seq + 1).padStart(7, '0')}`];
      const { rows } = await clients[worker].query<{ id: string | null }>(
        RESERVE_SQL,
        reserveParams({ provider: 'p', accountId: ACCOUNT, participants: pair, callbackUrl: CALLBACK }),
      );
      if (!rows[0]?.id) throw new Error('nothing reserved');
      ids.push(rows[0].id);
    });
    await clients[0].query(`UPDATE sessions SET status = 'active', binding_id = 'b-' || id WHERE status = 'pending'`);
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
  return ids;
}

async function main(): Promise<void> {
  if (!AGAINST) throw new Error('--against=DIR: a directory holding another build (its dist and node_modules)');
  const db = await startDatabase('bench_close_commit');
  await prepareDatabase(db.url);
  await withClient(db.url, async (c) => {
    await c.query(`INSERT INTO accounts (id, name) VALUES ($1, 'bench')`, [ACCOUNT]);
    await c.query(
      `INSERT INTO proxy_numbers (provider, number) SELECT 'p', '+23490' || lpad(n::text, 8, '0') FROM generate_series(1, 100) n`,
    );
  });
  const listener = new Client({ connectionString: db.url });
  await listener.connect();
  let heard = 0;
  let ends = 0;
  listener.on('notification', (n) => (n.payload === 'end-of-round' ? (ends += 1) : (heard += 1)));
  await listener.query('LISTEN webhook_delivery');
  const builds = [await loadBuild('thisBuild', resolve('.'), db.url), await loadBuild('against', resolve(AGAINST), db.url)];
  const postmaster = await withClient(db.url, async (c) =>
    parentPid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid),
  );

  async function closeRound(build: Build, amount: number) {
    const ids = await seed(db.url, amount);
    await new Promise((r) => setTimeout(r, 200)); // the seed's backends go idle
    const heard0 = heard;
    const cpu0 = { postgres: postgresCpuMs(postmaster), process: ownCpuMs() };
    const ms = await spread(ids.length, CONNECTIONS, (i) => build.close(ids[i]));
    const cpu = { postgres: postgresCpuMs(postmaster) - cpu0.postgres, process: ownCpuMs() - cpu0.process };
    // Notifications arrive in commit order: once this one is heard, every wake of the round has been.
    const ends0 = ends;
    await withClient(db.url, (c) => c.query(`SELECT pg_notify('webhook_delivery', 'end-of-round')`));
    for (let i = 0; i < 500 && ends === ends0; i++) await new Promise((r) => setTimeout(r, 10));
    const deliveries = await withClient(
      db.url,
      async (c) => (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE url = $1`, [CALLBACK])).rows[0].n,
    );
    if (deliveries !== ids.length) throw new Error(`${deliveries} deliveries for ${ids.length} closes`);
    return {
      closesPerSecond: round((ids.length / ms) * 1000, 1),
      postgresCpuMsPerClose: round(cpu.postgres / ids.length, 3),
      processCpuMsPerClose: round(cpu.process / ids.length, 3),
      wakesPerClose: round((heard - heard0) / ids.length, 3),
    };
  }

  type Round = Awaited<ReturnType<typeof closeRound>>;
  try {
    for (const build of builds) await closeRound(build, 500); // warm-up: every connection has planned its statements
    const rounds: Array<Record<string, Round>> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? builds : [...builds].reverse();
      const result: Record<string, Round> = {};
      for (const build of order) result[build.name] = await closeRound(build, AMOUNT);
      rounds.push(result);
      console.error(`round ${r + 1}: ${JSON.stringify(result)} load ${loadavg()[0].toFixed(1)}`);
    }
    const keys = ['closesPerSecond', 'postgresCpuMsPerClose', 'processCpuMsPerClose', 'wakesPerClose'] as const;
    const summary = Object.fromEntries(
      keys.map((key) => {
        const thisBuild = median(rounds.map((x) => x.thisBuild[key]));
        const against = median(rounds.map((x) => x.against[key]));
        return [key, { thisBuild, against, ratio: ratio(thisBuild, against) }];
      }),
    );
    console.log(
      JSON.stringify(
        {
          benchmark: 'session close transactions with a callback, A/B',
          against: AGAINST,
          database: db.describe,
          amount: AMOUNT,
          connections: CONNECTIONS,
          summary,
          rounds,
          load: loadavg(),
        },
        null,
        2,
      ),
    );
  } finally {
    for (const build of builds) await build.destroy();
    await listener.end();
    await db.drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
