/**
 * Webhook deliveries per second through the durable path, against a bare undici POST loop at the same
 * concurrency (8, the per-endpoint cap), in the same run, to the same local 2xx receiver (a child process,
 * so it costs both contenders the same).
 *
 * - `bare`: 8 concurrent loops of `undici.request` POSTing a webhook-sized body; nothing else.
 * - `whole`: the whole durable path. 16 producers record events with `EventOutbox.record`, each in its own
 *   transaction as a session change does; the delivery worker (woken by NOTIFY) takes the endpoint, signs
 *   each delivery at send time, POSTs it with at most 8 in flight, and writes its outcome and attempt back.
 *   Timed from the first record to the moment every delivery is marked delivered in the database.
 * - `pipeline`: the same worker on events already recorded (through `EventOutbox.record`, untimed): from
 *   the NOTIFY to every delivery marked delivered. The delivery side alone, without the producers' commits.
 *
 * The broker is the real app (`createBrokerApp`); its own worker is stopped and each phase runs a fresh
 * `DeliveryWorker` built by `createDeliveryWorker`, as `DeliveryWorkerService` builds its own, so the phases
 * do not overlap. Each round runs the three in turn, starting with the next one each round (the order rotates); figures are medians. CPU per delivery (this process, the receiver, and PostgreSQL
 * when it is the local one) says where the time goes. PostgreSQL: DATABASE_URL, or a throwaway local
 * server with its default, durable settings (fsync on). Prints one JSON object.
 * Usage: npm run bench:webhooks [-- --deliveries=N --rounds=N]
 */
import 'reflect-metadata';
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { DataSource } from 'typeorm';
import { LocalPostgres } from '@app/database';
import { systemClock } from '@app/clock';
import { createBrokerApp } from '../../apps/broker/src/broker-app';
import { loadConfig, type BrokerConfig } from '../../apps/broker/src/config';
import { ListenClient } from '../../apps/broker/src/database';
import { prepareDatabase } from '../../apps/broker/src/prepare-database';
import {
  createDeliveryWorker,
  DeliveryStore,
  DeliveryWorkerService,
  EventOutbox,
  transactionThenWake,
  WebhookSecrets,
  type DeliveryWorker,
} from '../../apps/broker/src/notifications';
import { postgresCpuMs, processCpuMs } from '../support/cpu';
import { runBench, started } from '../support/started';

const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.split('=')[1]);
};
const DELIVERIES = arg('deliveries', 3_000);
const ROUNDS = arg('rounds', 5);
const CONCURRENCY = 8;
const PRODUCERS = 16;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round1 = (x: number): number => Math.round(x * 10) / 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DATA = { interactionId: '', from: '+2348030000001', to: '+2348030000002', text: 'On my way, 5 minutes.' };

interface Measure {
  perSecond: number;
  cpuUsPerDelivery: { broker: number; receiver: number; postgres: number };
}

async function measure(count: number, receiver: ChildProcess, postmaster: number | undefined, run: () => Promise<void>): Promise<Measure> {
  const own = process.cpuUsage();
  const receiverBefore = processCpuMs(receiver.pid!);
  const postgresBefore = postmaster === undefined ? 0 : postgresCpuMs(postmaster);
  const started = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(own);
  const us = (ms: number): number => Math.round((ms * 1000) / count);
  return {
    perSecond: count / seconds,
    cpuUsPerDelivery: {
      broker: us((used.user + used.system) / 1000),
      receiver: us(processCpuMs(receiver.pid!) - receiverBefore),
      postgres: us((postmaster === undefined ? 0 : postgresCpuMs(postmaster)) - postgresBefore),
    },
  };
}

function startReceiver(): Promise<{ child: ChildProcess; url: string; stop: () => Promise<void> }> {
  const child = fork(join(__dirname, 'receiver.js'), { stdio: 'inherit' });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = started(async () => {
    if (child.exitCode === null && child.signalCode === null) child.send({ type: 'stop' });
    await exited;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('message', (message: { port: number }) => resolve({ child, url: `http://127.0.0.1:${message.port}/hooks`, stop }));
  });
}

async function bareLoop(url: string, body: string, count: number): Promise<void> {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  let left = count;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent });
        await res.body.dump();
        if (res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
      }
    }),
  );
  await agent.close();
}

class Broker {
  private constructor(
    readonly dataSource: DataSource,
    readonly outbox: EventOutbox,
    private readonly secrets: WebhookSecrets,
    private readonly config: BrokerConfig,
    private readonly databaseUrl: string,
  ) {}

  static async start(databaseUrl: string): Promise<{ broker: Broker; close: () => Promise<void> }> {
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      PORT: '0',
      PROVIDERS: 'primary=sim:http://127.0.0.1:9',
      // Required with a sim provider; no simulator runs in this bench.
      SIM_WEBHOOK_SECRET: 'bench-webhook-secret-not-used',
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    const app = await createBrokerApp(config, databaseUrl);
    await app.init();
    await app.get(DeliveryWorkerService).worker.stop();
    const close = started(() => app.close());
    const broker = new Broker(app.get(DataSource), app.get(EventOutbox), app.get(WebhookSecrets), config, databaseUrl);
    return { broker, close };
  }

  /** A delivery worker as DeliveryWorkerService builds its own (createDeliveryWorker), uncounted and quiet. */
  worker(): { worker: DeliveryWorker; close: () => Promise<void> } {
    const listener = new ListenClient(this.databaseUrl);
    const { worker, sender } = createDeliveryWorker({
      store: new DeliveryStore(this.dataSource),
      notifications: this.config.notifications,
      clock: systemClock,
      secrets: this.secrets,
      listener,
      logger: { log: () => undefined, warn: (m) => console.error(m) },
    });
    return {
      worker,
      close: async () => {
        await worker.stop();
        await listener.stop();
        await sender.close();
      },
    };
  }

  async record(accountId: string, count: number, producers: number): Promise<void> {
    let left = count;
    await Promise.all(
      Array.from({ length: producers }, async () => {
        while (left-- > 0) {
          await transactionThenWake(
            this.dataSource,
            (message) => console.warn(message),
            (manager, wakes) =>
              this.outbox.record(
                manager,
                {
                  type: 'message.relayed',
                  accountId,
                  sessionId: randomUUID(),
                  callbackUrl: null,
                  data: { ...DATA, interactionId: randomUUID() },
                },
                wakes,
              ),
          );
        }
      }),
    );
  }

  async drained(): Promise<void> {
    for (;;) {
      const [{ pending }] = (await this.dataSource.query(
        `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE status = 'pending') AS pending`,
      )) as Array<{ pending: boolean }>;
      if (!pending) return;
      await sleep(10);
    }
  }
}

async function main(): Promise<void> {
  let postgres: LocalPostgres | undefined;
  let stopPostgres: () => Promise<void> = () => Promise.resolve();
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    const dataDir = await mkdtemp(join(tmpdir(), 'bench-webhooks-'));
    await chmod(dataDir, 0o755);
    const server = await LocalPostgres.start({ dataDir, database: 'bench_webhooks', ephemeral: true });
    stopPostgres = started(async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    });
    postgres = server;
    databaseUrl = postgres.url;
  }
  const postmaster = postgres ? Number((await readFile(join(postgres.clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]) : undefined;
  await prepareDatabase(databaseUrl);
  const receiver = await startReceiver();
  const { broker, close } = await Broker.start(databaseUrl);
  try {
    const [{ id: accountId }] = (await broker.dataSource.query(
      'INSERT INTO accounts (name, default_callback_url) VALUES ($1, $2) RETURNING id',
      [`bench-${randomUUID()}`, receiver.url],
    )) as Array<{ id: string }>;
    const body = JSON.stringify({
      id: randomUUID(),
      type: 'message.relayed',
      timestamp: new Date().toISOString(),
      data: { ...DATA, interactionId: randomUUID() },
    });

    const whole = async (count: number): Promise<void> => {
      const { worker, close: stop } = broker.worker();
      await worker.start();
      await broker.record(accountId, count, PRODUCERS);
      await broker.drained();
      await stop();
    };
    const pipeline = async (count: number, timed: (run: () => Promise<void>) => Promise<Measure>): Promise<Measure> => {
      await broker.record(accountId, count, PRODUCERS);
      const { worker, close: stop } = broker.worker();
      const result = await timed(async () => {
        await worker.start();
        await broker.drained();
      });
      await stop();
      return result;
    };

    // Warm-up: connections, JIT, the account's secret, the endpoint row, table statistics.
    await bareLoop(receiver.url, body, 500);
    await whole(500);
    await broker.dataSource.query('ANALYZE');

    const results: Record<'bare' | 'whole' | 'pipeline', Measure[]> = { bare: [], whole: [], pipeline: [] };
    const contenders: Array<['bare' | 'whole' | 'pipeline', () => Promise<Measure>]> = [
      ['bare', () => measure(DELIVERIES, receiver.child, postmaster, () => bareLoop(receiver.url, body, DELIVERIES))],
      ['whole', () => measure(DELIVERIES, receiver.child, postmaster, () => whole(DELIVERIES))],
      ['pipeline', () => pipeline(DELIVERIES, (run) => measure(DELIVERIES, receiver.child, postmaster, run))],
    ];
    // Each round starts with the next contender (bare, whole, pipeline; whole, pipeline, bare; ...), so no
    // contender always runs first (cold) or last (after the others warmed the database and the receiver).
    const orders: string[][] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = contenders.map((_, j) => contenders[(i + j) % contenders.length]);
      orders.push(order.map(([name]) => name));
      for (const [name, run] of order) results[name].push(await run());
    }
    const [{ attempts, delivered }] = (await broker.dataSource.query(
      `SELECT (SELECT count(*)::int FROM webhook_attempts) AS attempts, (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'delivered') AS delivered`,
    )) as Array<{ attempts: number; delivered: number }>;
    const expected = 500 + 2 * ROUNDS * DELIVERIES;
    if (delivered !== expected || attempts !== expected)
      throw new Error(`expected ${expected} deliveries and attempts, found ${delivered} and ${attempts}`);

    const summary = (ms: Measure[]) => ({
      perSecond: round1(median(ms.map((m) => m.perSecond))),
      rounds: ms.map((m) => round1(m.perSecond)),
      cpuUsPerDelivery: {
        broker: median(ms.map((m) => m.cpuUsPerDelivery.broker)),
        receiver: median(ms.map((m) => m.cpuUsPerDelivery.receiver)),
        postgres: median(ms.map((m) => m.cpuUsPerDelivery.postgres)),
      },
    });
    const ratio = (a: number, b: number): number => Math.round((a / b) * 1000) / 1000;
    const cpuTotal = (m: ReturnType<typeof summary>): number =>
      m.cpuUsPerDelivery.broker + m.cpuUsPerDelivery.receiver + m.cpuUsPerDelivery.postgres;
    const bare = summary(results.bare);
    const wholePath = summary(results.whole);
    const pipelineOnly = summary(results.pipeline);
    console.log(
      JSON.stringify(
        {
          benchmark: 'webhooks',
          deliveriesPerRound: DELIVERIES,
          rounds: ROUNDS,
          roundOrders: orders,
          concurrency: CONCURRENCY,
          producers: PRODUCERS,
          bareUndici: bare,
          durableWholePath: wholePath,
          durablePipeline: pipelineOnly,
          ratioWholePath: ratio(wholePath.perSecond, bare.perSecond),
          ratioPipeline: ratio(pipelineOnly.perSecond, bare.perSecond),
          // Each round's durable figure over the bare figure of the same round: less sensitive to other load.
          ratioWholePathPairedMedian: ratio(median(results.whole.map((m, i) => m.perSecond / results.bare[i].perSecond)), 1),
          ratioPipelinePairedMedian: ratio(median(results.pipeline.map((m, i) => m.perSecond / results.bare[i].perSecond)), 1),
          // The same comparison in CPU spent per delivery, all processes together (bare ÷ durable).
          cpuRatioWholePath: ratio(cpuTotal(bare), cpuTotal(wholePath)),
          cpuRatioPipeline: ratio(cpuTotal(bare), cpuTotal(pipelineOnly)),
          target: 0.5,
          postgres: postgres
            ? `local ${postgres.binaries.major} (${postgres.binaries.source}), default settings (fsync on)`
            : 'DATABASE_URL',
          node: process.version,
          cpus: cpus().length,
        },
        null,
        2,
      ),
    );
  } finally {
    await close();
    await receiver.stop();
    await stopPostgres();
  }
}

runBench(main);
