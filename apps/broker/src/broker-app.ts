import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import type { BrokerConfig } from './config';
import { BootQuietLogger } from './logging/boot-quiet-logger';

/**
 * Builds the broker's HTTP app (not yet listening): used by `main.ts` and by the end-to-end
 * tests, so both run exactly the same pipeline.
 */
export async function createBrokerApp(config: BrokerConfig, databaseUrl: string): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, databaseUrl), {
    bufferLogs: true,
    bodyParser: false,
    // Provider webhooks are verified over the exact bytes received.
    rawBody: true,
    abortOnError: false,
    // On close, idle keep-alive and streaming connections are cut rather than waited for.
    forceCloseConnections: true,
  });
  app.useLogger(new BootQuietLogger(app.get(Logger)));
  app.disable('x-powered-by');
  app.useBodyParser('json', { limit: config.requestBodyLimitBytes, type: ['application/json', 'application/*+json'] });
  app.useBodyParser('urlencoded', { limit: config.requestBodyLimitBytes, extended: false });

  const openApi = new DocumentBuilder()
    .setTitle('Session Broker')
    .setDescription('Number-masked voice and SMS sessions across CPaaS providers, with failover by circuit breaker.')
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key' }, 'api-key')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' }, 'admin-token')
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, openApi), { jsonDocumentUrl: 'docs/openapi.json' });
  return app;
}
