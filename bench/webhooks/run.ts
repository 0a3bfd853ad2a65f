/**
 * Webhook deliveries per second through the whole durable path, against a bare undici POST loop at the
 * same concurrency, in the same run, to the same local 2xx receiver (a child process).
 *
 * Durable path: producers record events with `EventOutbox.record`, each in its own transaction (as a
 * session change does); the broker's delivery worker (the real app, `createBrokerApp`) is woken by NOTIFY,
 * takes the endpoint, signs each delivery at send time, POSTs it over undici with at most 8 in flight
 * (the per-endpoint cap), and writes the outcome and the attempt back. Timed from the first record to
 * the moment every delivery is marked delivered in the database. Bare loop: 8 concurrent loops of
 * `undici.request` POSTing the same body to the same receiver, nothing else.
 *
 * Rounds alternate bare and durable; figures are medians. PostgreSQL: DATABASE_URL, or a throwaway local
 * server with its default (durable: fsync on) settings. Prints one JSON object.
 * Usage: npm run bench:webhooks [-- --deliveries=N --rounds=N]
 */
import 'reflect-metadata';
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { DataSource } from 'typeorm';
import { LocalPostgres } from '@app/database';
import { createBrokerApp } from '../../apps/broker/src/broker-app';
import { loadConfig } from '../../apps/broker/src/config';
import { prepareDatabase } from '../../apps/broker/src/database/prepare-database';
import { EventOutbox } from '../../apps/broker/src/notifications';

const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.split('=')[1]);
};
const DELIVERIES = arg('deliveries', 5_000);
const ROUNDS = arg('rounds', 3);
const CONCURRENCY = 8;
const PRODUCERS = arg('producers', 16);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x: number): number => Math.round(x * 10) / 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function startReceiver(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(join(__dirname, 'receiver.js'), { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', (message: { port: number }) => resolve({ child, url: `http://127.0.0.1:${message.port}/hooks` }));
  });
}

/** 8 loops POSTing as fast as the receiver answers. */
async function bareLoop(url: string, body: string, count: number): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  let left = count;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent });
        await res.body.dump();
        if (res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await agent.close();
  return count / seconds;
}

async function durablePath(dataSource: DataSource, outbox: EventOutbox, accountId: string, count: number): Promise<number> {
  let left = count;
  const started = process.hrtime.bigint();
  const producing = Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      while (left-- > 0) {
        await dataSource.transaction((manager) =>
          outbox.record(manager, {
            type: 'message.relayed',
            accountId,
            sessionId: randomUUID(),
            callbackUrl: null,
            data: { interactionId: randomUUID(), from: '+2348030000001', to: '+2348030000002', text: 'On my way, 5 minutes.' },
          }),
        );
      }
    }),
  );
  await producing;
  for (;;) {
    const [{ pending }] = (await dataSource.query(`SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending'`)) as Array<{
      pending: number;
    }>;
    if (pending === 0) break;
    await sleep(5);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return count / seconds;
}

async function main(): Promise<void> {
  let postgres: LocalPostgres | undefined;
  let dataDir: string | undefined;
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'bench-webhooks-'));
    await chmod(dataDir, 0o755);
    postgres = await LocalPostgres.start({ dataDir, database: 'bench_webhooks', ephemeral: true });
    databaseUrl = postgres.url;
  }
  await prepareDatabase(databaseUrl);
  const receiver = await startReceiver();
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    PROVIDERS: 'primary=sim:http://127.0.0.1:9',
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  const app = await createBrokerApp(config, databaseUrl);
  await app.init();
  try {
    const dataSource = app.get(DataSource);
    const outbox = app.get(EventOutbox);
    const [{ id: accountId }] = (await dataSource.query('INSERT INTO accounts (name, default_callback_url) VALUES ($1, $2) RETURNING id', [
      'bench',
      receiver.url,
    ])) as Array<{ id: string }>;
    const body = JSON.stringify({
      id: randomUUID(),
      type: 'message.relayed',
      timestamp: new Date().toISOString(),
      data: { interactionId: randomUUID(), from: '+2348030000001', to: '+2348030000002', text: 'On my way, 5 minutes.' },
    });

    // Warm-up: connections, JIT, the account's secret, the endpoint row.
    await bareLoop(receiver.url, body, 500);
    await durablePath(dataSource, outbox, accountId, 500);

    const bare: number[] = [];
    const durable: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      bare.push(await bareLoop(receiver.url, body, DELIVERIES));
      durable.push(await durablePath(dataSource, outbox, accountId, DELIVERIES));
    }
    const [{ attempts }] = (await dataSource.query('SELECT count(*)::int AS attempts FROM webhook_attempts')) as Array<{ attempts: number }>;
    const expected = 500 + ROUNDS * DELIVERIES;
    if (attempts !== expected) throw new Error(`expected ${expected} attempts, found ${attempts}`);
    const bareMedian = median(bare);
    const durableMedian = median(durable);
    console.log(
      JSON.stringify(
        {
          benchmark: 'webhooks',
          deliveriesPerRound: DELIVERIES,
          rounds: ROUNDS,
          concurrency: CONCURRENCY,
          producers: PRODUCERS,
          bareUndiciPerSecond: round(bareMedian),
          durablePerSecond: round(durableMedian),
          ratio: Math.round((durableMedian / bareMedian) * 1000) / 1000,
          target: 0.5,
          rounds_bare: bare.map(round),
          rounds_durable: durable.map(round),
          postgres: postgres ? `local ${postgres.binaries.major} (${postgres.binaries.source}), default settings` : 'DATABASE_URL',
          node: process.version,
          cpus: cpus().length,
        },
        null,
        2,
      ),
    );
  } finally {
    await app.close();
    receiver.child.send({ type: 'stop' });
    await postgres?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
