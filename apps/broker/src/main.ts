/**
 * The production entry point (the Docker image's command): config, app, listen, and on
 * SIGINT/SIGTERM a clean stop. It needs DATABASE_URL and PROVIDERS, and starts no database and no
 * simulator of its own; `npm start`'s all-local setup is apps/local. A start that cannot work
 * prints one line saying why and exits non-zero.
 */
import 'reflect-metadata';
import { createBrokerApp } from './broker-app';
import { AppLogger } from './logging/app-logger';
import { loadConfigFromEnvironment } from './config';
import { prepareDatabase } from './prepare-database';
import { ProcessLifecycle, listen, listeningUrl } from './process-lifecycle';

const lifecycle = new ProcessLifecycle('session-broker');

lifecycle.run(async () => {
  const config = loadConfigFromEnvironment({ standalone: true });
  const databaseUrl = config.databaseUrl!;
  await prepareDatabase(databaseUrl);
  const broker = await createBrokerApp(config, databaseUrl);
  lifecycle.onStop('broker', () => broker.close());
  await listen(broker, config.host, config.port, 'PORT');
  broker.get(AppLogger).log(`broker listening on ${listeningUrl(broker)} (API docs at /docs; HOST sets the address)`);
});
