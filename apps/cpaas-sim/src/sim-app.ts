import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { PrototypedExpressAdapter } from '@app/http';
import type { SimulatorConfig } from './config/sim-config';
import { SimModule } from './sim.module';

/** The simulator's HTTP app, not yet listening: used by its own main, by `npm start` and by tests. */
export async function createSimulatorApp(config: SimulatorConfig): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(SimModule.forRoot(config), new PrototypedExpressAdapter(), {
    logger: ['error', 'warn'],
    abortOnError: false,
  });
  app.disable('x-powered-by');
  return app;
}
