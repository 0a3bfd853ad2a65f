/**
 * The product as separate real processes, for benchmarks and drills: a PostgreSQL server, the CPaaS
 * simulator (`dist/apps/cpaas-sim/src/main.js`) and any number of brokers (`dist/apps/broker/src/main.js`,
 * what `npm start` runs), each on its own loopback port. Needs `npm run build` first.
 *
 * Everything here waits by counting bounded attempts, never by measuring time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { LocalPostgres } from '@app/database';
import { freePort } from '@app/testing';
import { BROKER_NODE_FLAGS } from '../../apps/broker/src/runtime-flags';
import { started } from './started';

export const BENCH_API_KEY = 'bench-key-aaaaaaaaaaaaaaaaaaaaaaaa';
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';
export const BENCH_WEBHOOK_SECRET = 'bench-sim-webhook-secret';

const BROKER_MAIN = 'dist/apps/broker/src/main.js';
const SIM_MAIN = 'dist/apps/cpaas-sim/src/main.js';
/** Output kept per process: enough to explain a failure, bounded under any load. */
const OUTPUT_KEEP = 64 * 1024;

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

export { freePort };

/** Polls until `check` resolves true, at most `attempts` times. */
export async function waitFor(what: string, check: () => Promise<boolean>, attempts = 300, pauseMs = 100): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check().catch(() => false)) return;
    await sleep(pauseMs);
  }
  throw new Error(`${what}: not reached after ${attempts} attempts`);
}

export interface ChildHandle {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL: what `kill -9` does. */
  kill9(): Promise<void>;
}

function spawnNode(script: string, env: Record<string, string>, nodeArgs: string[] = []): ChildHandle {
  const child = spawn(process.execPath, [...nodeArgs, resolve(script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > OUTPUT_KEEP * 2) out = out.slice(-OUTPUT_KEEP);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  const signal = async (name: NodeJS.Signals) => {
    if (running()) child.kill(name);
    await exited;
  };
  // Stopped with the rest if the run fails; a process that has exited has nothing left to stop.
  const stop = started(() => signal('SIGTERM'));
  void exited.then(stop);
  return { child, output: () => out, exited, running, stop, kill9: () => signal('SIGKILL') };
}

/** A PostgreSQL database of its own: a throwaway local server, or a fresh database on DATABASE_URL's server. */
export interface BenchDatabase {
  url: string;
  /** The local server, when this started one (drills stop and start it). */
  server?: LocalPostgres;
  dataDir?: string;
  port: number;
  describe: string;
  /** Stops the server (keeping its data) so it refuses connections; `restart` brings it back on the same port. */
  stopServer(): Promise<void>;
  /** Kills the server with SIGKILL (postmaster and backends), keeping its data; `restart` recovers it. */
  crashServer(): Promise<void>;
  restartServer(): Promise<void>;
  drop(): Promise<void>;
}

export async function startDatabase(
  name: string,
  options: { external?: string; settings?: Record<string, string> } = {},
): Promise<BenchDatabase> {
  if (options.external) {
    const database = `${name}_${randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: options.external });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const parsed = new URL(options.external);
    parsed.pathname = `/${database}`;
    const fail = () => Promise.reject(new Error('cannot stop a server given by DATABASE_URL'));
    const drop = started(async () => {
      const again = new Client({ connectionString: options.external });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await again.end();
    });
    return {
      url: parsed.toString(),
      port: Number(parsed.port || 5432),
      describe: 'DATABASE_URL server',
      stopServer: fail,
      crashServer: fail,
      restartServer: fail,
      drop,
    };
  }
  const dataDir = await mkdtemp(join(tmpdir(), `${name}-`));
  await chmod(dataDir, 0o755);
  let server = await LocalPostgres.start({ dataDir, database: name, settings: options.settings });
  const port = server.port;
  const settingsNote = options.settings ? `settings ${JSON.stringify(options.settings)}` : 'default (durable) settings';
  const handle: BenchDatabase = {
    url: server.url,
    server,
    dataDir,
    port,
    describe: `local PostgreSQL ${server.binaries.major} (${server.binaries.source}), ${settingsNote}`,
    stopServer: () => server.stop(),
    crashServer: () => server.crash(),
    restartServer: async () => {
      server = await LocalPostgres.start({ dataDir, port, database: name, settings: options.settings });
      handle.server = server;
    },
    drop: started(async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    }),
  };
  return handle;
}

export interface SimulatorProcess extends ChildHandle {
  url: string;
}

/**
 * The simulator as a process of its own; `main` runs another build's entry point, `nodeArgs` adds Node flags (a
 * profiler), `env` variables. It runs with the broker's V8 flags, as it does inside `npm start`'s process: it stands
 * in for a vendor, so a burst after quiet must not measure its heap growing back (`v8Defaults` to see that).
 */
export async function startSimulatorProcess(
  brokerUrl = 'http://127.0.0.1:9',
  options: { nodeArgs?: string[]; main?: string; env?: Record<string, string>; v8Defaults?: boolean } = {},
): Promise<SimulatorProcess> {
  const port = await freePort();
  const env = { SIM_PORT: String(port), BROKER_URL: brokerUrl, SIM_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET, ...options.env };
  const handle = spawnNode(options.main ?? SIM_MAIN, env, [...(options.v8Defaults ? [] : BROKER_NODE_FLAGS), ...(options.nodeArgs ?? [])]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor('simulator listening', async () => {
    if (!handle.running()) throw new Error(`simulator exited: ${handle.output()}`);
    return (await fetch(`${url}/_sim/providers/primary/faults`)).ok;
  }).catch(async (error: unknown) => {
    await handle.stop();
    throw error;
  });
  return { ...handle, url };
}

export interface BrokerProcess extends ChildHandle {
  url: string;
  port: number;
  env: Record<string, string>;
}

/**
 * One broker as `npm start` runs it, against `databaseUrl`, with `primary` and `failover` on the
 * simulator at `simUrl`; `env` adds or overrides variables; `main` runs another build's entry point.
 * Resolves once /health/ready says 200.
 */
export async function startBrokerProcess(
  databaseUrl: string,
  simUrl: string,
  env: Record<string, string> = {},
  options: { port?: number; waitReady?: boolean; nodeArgs?: string[]; main?: string } = {},
): Promise<BrokerProcess> {
  const port = options.port ?? (await freePort());
  const fullEnv = {
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    PROVIDERS: `primary=sim:${simUrl},failover=sim:${simUrl}`,
    SIM_WEBHOOK_SECRET: BENCH_WEBHOOK_SECRET,
    BROKER_API_KEY: BENCH_API_KEY,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    // Benchmarks and drills measure the broker's own ceiling and the pool rule, not the per-key
    // rate limits or the fair-use limit per participant (docs/security.md).
    SESSION_PARTICIPANT_LIMIT: '1000',
    RATE_LIMIT_CREATES_PER_SECOND: '100000',
    RATE_LIMIT_CREATES_BURST: '1000000',
    RATE_LIMIT_READS_PER_SECOND: '100000',
    RATE_LIMIT_READS_BURST: '1000000',
    ...env,
  };
  const handle = spawnNode(options.main ?? BROKER_MAIN, fullEnv, [...BROKER_NODE_FLAGS, ...(options.nodeArgs ?? [])]);
  const url = `http://127.0.0.1:${port}`;
  if (options.waitReady ?? true) {
    await waitFor('broker ready', async () => {
      if (!handle.running()) throw new Error(`broker exited: ${handle.output()}`);
      return (await fetch(`${url}/health/ready`)).status === 200;
    }).catch(async (error: unknown) => {
      await handle.stop();
      throw error;
    });
  }
  return { ...handle, url, port, env: fullEnv };
}

export { setFault, type FaultMode } from '../../test/support/sim-control';
