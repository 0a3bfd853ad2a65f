/**
 * Starts the whole product for an end-to-end test, the way a user runs it: the CPaaS simulator and
 * the broker, each on a free loopback port, the broker on this test file's own migrated database.
 */
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { createBrokerApp } from '../../apps/broker/src/broker-app';
import { loadConfig, type BrokerConfig } from '../../apps/broker/src/config';
import { createSimulatorApp } from '../../apps/cpaas-sim/src/sim-app';
import type { SimulatorConfig } from '../../apps/cpaas-sim/src/config/sim-config';

export const TEST_WEBHOOK_SECRET = 'test-sim-webhook-secret';

/** Per-key (and per-address wrong-key) rate limits far above what any test sends. */
export const UNTHROTTLED = {
  RATE_LIMIT_CREATES_PER_SECOND: '100000',
  RATE_LIMIT_CREATES_BURST: '1000000',
  RATE_LIMIT_READS_PER_SECOND: '100000',
  RATE_LIMIT_READS_BURST: '1000000',
  RATE_LIMIT_AUTH_FAILURES_PER_SECOND: '100000',
  RATE_LIMIT_AUTH_FAILURES_BURST: '1000000',
};

export interface SimulatorHarness {
  url: string;
  app: NestExpressApplication;
  config: SimulatorConfig;
}

export interface BrokerHarness {
  url: string;
  app: NestExpressApplication;
  config: BrokerConfig;
  db: TestDatabase;
  sim: SimulatorHarness;
  close(): Promise<void>;
}

export async function startSimulator(): Promise<SimulatorHarness> {
  // brokerUrl is filled in once the broker listens; the simulator reads it when it sends.
  const config: SimulatorConfig = { port: 0, brokerUrl: 'http://127.0.0.1:9', webhookSecret: TEST_WEBHOOK_SECRET };
  const app = await createSimulatorApp(config);
  await app.listen(0, '127.0.0.1');
  return { url: await appUrl(app), app, config };
}

/** `env` overrides the broker's environment (durations shortened, keys, tokens...); `logs` receives the log lines (JSON). */
export async function startBroker(
  env: Record<string, string> = {},
  options: { db?: TestDatabase; sim?: SimulatorHarness; logs?: { write(line: string): void } } = {},
): Promise<BrokerHarness> {
  const db = options.db ?? (await createTestDatabase());
  const sim = options.sim ?? (await startSimulator());
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    PORT: '0',
    PROVIDERS: `primary=sim:${sim.url},failover=sim:${sim.url}`,
    SIM_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    DATABASE_URL: db.url,
    // Tests of other features send bursts from one key; test/hostile.e2e-spec.ts sets its own rates.
    ...UNTHROTTLED,
    // The pool opens all its connections at start: a few keep each test's start cheap on the shared server.
    DATABASE_POOL_SIZE: '5',
    ...env,
  });
  let app: NestExpressApplication;
  try {
    // DATABASE_URL in `env` wins: a test may put a proxy between the broker and its database.
    app = await createBrokerApp(config, config.databaseUrl ?? db.url, options.logs);
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    if (!options.sim) await sim.app.close();
    if (!options.db) await db.drop();
    throw error;
  }
  const url = await appUrl(app);
  sim.config.brokerUrl = url;
  return {
    url,
    app,
    config,
    db,
    sim,
    close: async () => {
      await app.close();
      if (!options.sim) await sim.app.close();
      if (!options.db) await db.drop();
    },
  };
}

async function appUrl(app: NestExpressApplication): Promise<string> {
  const url = await app.getUrl();
  return url.replace('[::1]', '127.0.0.1').replace('localhost', '127.0.0.1');
}
