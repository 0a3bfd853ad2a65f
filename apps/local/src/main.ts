/**
 * `npm start`: the broker, and for a new user everything it needs on one machine. With
 * DATABASE_URL unset it runs an embedded PostgreSQL under DATA_DIR; with PROVIDERS unset it runs
 * the CPaaS simulator in this same process on SIM_PORT (see local-mode.ts for the keys it makes).
 * SIGINT/SIGTERM close the HTTP servers, then the database pool, then the embedded server, and the
 * process exits with nothing left behind. A start that cannot work prints one line saying why and
 * exits non-zero. The production entry point (apps/broker/src/main.ts) does none of this.
 */
import 'reflect-metadata';
import { LocalPostgres } from '@app/database';
import { apiKeyPrefix } from '../../broker/src/accounts/api-key-hash';
import { createBrokerApp } from '../../broker/src/broker-app';
import { loadConfigFromEnvironment, type BrokerConfig } from '../../broker/src/config';
import { AppLogger } from '../../broker/src/logging/app-logger';
import { prepareDatabase } from '../../broker/src/prepare-database';
import { ProcessLifecycle, listen, listeningUrl, urlHost } from '../../broker/src/process-lifecycle';
import { createSimulatorApp } from '../../cpaas-sim/src/sim-app';
import { developmentAdminToken, developmentApiKey, localModeLines, simulatorWebhookSecret } from './local-mode';

const lifecycle = new ProcessLifecycle('session-broker');

lifecycle.run(async () => {
  let config = loadConfigFromEnvironment();
  const startupLog: string[] = [];

  let databaseUrl = config.databaseUrl;
  let postgres: LocalPostgres | undefined;
  if (!databaseUrl) {
    const server = await LocalPostgres.start({ dataDir: config.dataDir, database: 'broker', log: (line) => startupLog.push(line) });
    lifecycle.onStop('embedded PostgreSQL', () => server.stop());
    postgres = server;
    databaseUrl = server.url;
  }
  await prepareDatabase(databaseUrl);
  const devKey = await developmentApiKey(config);
  if (devKey)
    config = {
      ...config,
      apiKeys: [devKey.key],
      apiKeysFrom: { label: 'development key', description: `the development key kept in ${devKey.file} (BROKER_API_KEY is not set)` },
    };
  const devAdmin = await developmentAdminToken(config);
  if (devAdmin) config = { ...config, adminToken: devAdmin.token };

  let simulatorUrl: string | undefined;
  if (config.simulated) {
    if (!config.simWebhookSecret) config = { ...config, simWebhookSecret: await simulatorWebhookSecret(config) };
    const simulator = await createSimulatorApp({
      port: config.simPort,
      brokerUrl: `http://${urlHost(loopbackFor(config.host))}:${config.port}`,
      webhookSecret: config.simWebhookSecret!,
    });
    lifecycle.onStop('simulator', () => simulator.close());
    await listen(simulator, config.host, config.simPort, 'SIM_PORT');
    simulatorUrl = listeningUrl(simulator);
  }

  const broker = await createBrokerApp(config, databaseUrl);
  lifecycle.onStop('broker', () => broker.close());
  await listen(broker, config.host, config.port, 'PORT');

  const logger = broker.get(AppLogger);
  for (const line of startupLog) logger.log(line);
  logger.log(`broker listening on ${listeningUrl(broker)} (API docs at /docs; HOST sets the address)`);
  if (simulatorUrl)
    logger.log(`CPaaS simulator listening on ${simulatorUrl} (providers: ${config.providers.map((p) => p.name).join(', ')})`);
  logger.log(describeDatabase(config, postgres));
  // The log is no place for a credential (a terminal's scrollback, a log collector): where it is, and its start.
  if (devKey)
    logger.log(
      `development API key ${apiKeyPrefix(devKey.key)}… in ${devKey.file} (KEY=$(cat ${devKey.file}); set BROKER_API_KEY to choose your own)`,
    );
  if (devAdmin)
    logger.log(
      `development admin token ${apiKeyPrefix(devAdmin.token)}… in ${devAdmin.file} (ADMIN_TOKEN=$(cat ${devAdmin.file}); set ADMIN_TOKEN to choose your own)`,
    );
  for (const line of localModeLines(config)) logger.log(line);
});

/** Where a listener on `host` is reached from this machine: a wildcard address over loopback. */
function loopbackFor(host: string): string {
  return host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
}

function describeDatabase(config: BrokerConfig, postgres: LocalPostgres | undefined): string {
  if (!postgres) return `database: ${redact(config.databaseUrl!)} (DATABASE_URL)`;
  return `database: embedded PostgreSQL ${postgres.binaries.major} (${postgres.binaries.source}) at ${postgres.url.replace(/:[^:@/]+@/, ':***@')}, data in ${postgres.clusterDir}`;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
