import 'reflect-metadata';
import { loadSimulatorConfig } from './config/sim-config';
import { createSimulatorApp } from './sim-app';

/** The simulator on its own (docker-compose); `npm start` runs it inside the broker's process. */
async function main(): Promise<void> {
  const config = loadSimulatorConfig();
  const app = await createSimulatorApp(config);
  app.enableShutdownHooks();
  await app.listen(config.port, '0.0.0.0');
  console.log(JSON.stringify({ level: 'info', msg: `CPaaS simulator listening on http://0.0.0.0:${config.port}` }));
}

main().catch((error: unknown) => {
  console.error(`cpaas-sim: cannot start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
