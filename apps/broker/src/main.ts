/**
 * `npm start`: the broker, and for a new user everything it needs on one machine. With
 * DATABASE_URL unset it runs an embedded PostgreSQL under DATA_DIR; with PROVIDERS unset it runs
 * the CPaaS simulator in this same process on SIM_PORT. SIGINT/SIGTERM close the HTTP servers,
 * then the database pool, then the embedded server, and the process exits with nothing left
 * behind. A start that cannot work prints one line saying why and exits non-zero.
 */
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { LocalPostgres } from '@app/database';
import { Logger } from 'nestjs-pino';
import { createSimulatorApp } from '../../cpaas-sim/src/sim-app';
import { createBrokerApp } from './broker-app';
import { loadConfigFromEnvironment, type BrokerConfig } from './config';
import { prepareDatabase } from './database/prepare-database';
import { developmentAdminToken, localModeLines } from './local-mode';

interface Running {
  postgres?: LocalPostgres;
  simulator?: INestApplication;
  broker?: INestApplication;
}

const running: Running = {};
let stopping = false;

async function main(): Promise<void> {
  let config = loadConfigFromEnvironment();
  const startupLog: string[] = [];

  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    running.postgres = await LocalPostgres.start({ dataDir: config.dataDir, database: 'broker', log: (line) => startupLog.push(line) });
    databaseUrl = running.postgres.url;
  }
  await prepareDatabase(databaseUrl);
  const devKey = await developmentApiKey(config);
  if (devKey) config = { ...config, apiKeys: [devKey.key] };
  const devAdmin = await developmentAdminToken(config);
  if (devAdmin) config = { ...config, adminToken: devAdmin.token };

  if (config.simulated) {
    running.simulator = await createSimulatorApp({
      port: config.simPort,
      brokerUrl: `http://127.0.0.1:${config.port}`,
      webhookSecret: config.simWebhookSecret,
    });
    await listen(running.simulator, config.simPort, 'SIM_PORT');
  }

  running.broker = await createBrokerApp(config, databaseUrl);
  await listen(running.broker, config.port, 'PORT');

  const logger = running.broker.get(Logger);
  for (const line of startupLog) logger.log(line);
  logger.log(`broker listening on http://127.0.0.1:${config.port} (API docs at /docs)`);
  if (running.simulator)
    logger.log(
      `CPaaS simulator listening on http://127.0.0.1:${config.simPort} (providers: ${config.providers.map((p) => p.name).join(', ')})`,
    );
  logger.log(describeDatabase(config, running.postgres));
  if (devKey) logger.log(`development API key: ${devKey.key} (kept in ${devKey.file}; set BROKER_API_KEY to choose your own)`);
  if (devAdmin) logger.log(`development admin token: ${devAdmin.token} (kept in ${devAdmin.file}; set ADMIN_TOKEN to choose your own)`);
  for (const line of localModeLines(config)) logger.log(line);
}

/**
 * The all-local setup (no DATABASE_URL, no PROVIDERS, no BROKER_API_KEY) gets an API key of its own,
 * made once and kept beside the data, so a new user can create sessions with no other setup.
 */
async function developmentApiKey(config: BrokerConfig): Promise<{ key: string; file: string } | undefined> {
  if (!config.simulated || config.databaseUrl || config.apiKeys.length > 0) return undefined;
  const file = join(resolve(config.dataDir), 'dev-api-key');
  const saved = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (saved) return { key: saved, file };
  const key = `sk_dev_${randomBytes(18).toString('base64url')}`;
  // The embedded server made the data folder already.
  await writeFile(file, `${key}\n`, { mode: 0o600 }).catch(() => undefined);
  return { key, file };
}

async function listen(app: INestApplication, port: number, variable: string): Promise<void> {
  try {
    await app.listen(port, '0.0.0.0');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`port ${port} is already in use (set ${variable} to another port)`);
    if (code === 'EACCES') throw new Error(`not allowed to listen on port ${port} (set ${variable} to another port)`);
    throw error;
  }
}

function describeDatabase(config: BrokerConfig, postgres: LocalPostgres | undefined): string {
  if (!postgres) return `database: ${redact(config.databaseUrl!)} (DATABASE_URL)`;
  return `database: embedded PostgreSQL ${postgres.binaries.major} (${postgres.binaries.source}) at ${postgres.url.replace(/:[^:@/]+@/, ':***@')}, data in ${postgres.clusterDir}`;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

async function shutdown(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  const steps: Array<[string, (() => Promise<void>) | undefined]> = [
    ['broker', running.broker && (() => running.broker!.close())],
    ['simulator', running.simulator && (() => running.simulator!.close())],
    ['embedded PostgreSQL', running.postgres && (() => running.postgres!.stop())],
  ];
  for (const [name, step] of steps) {
    if (!step) continue;
    try {
      await step();
    } catch (error) {
      console.error(`session-broker: stopping the ${name} failed: ${(error as Error).message}`);
      exitCode = exitCode || 1;
    }
  }
  process.exit(exitCode);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) {
      console.error('session-broker: second signal, exiting now');
      process.exit(1);
    }
    void shutdown(0);
  });
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`session-broker: cannot start: ${message}`);
  void shutdown(1);
});
