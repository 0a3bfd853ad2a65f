import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { PrototypedExpressAdapter } from '@app/http';
import { RateLimits, requireMetricsToken } from './accounts';
import { AppModule } from './app.module';
import type { BrokerConfig } from './config';
import { AppLogger } from './logging/app-logger';
import { BootQuietLogger } from './logging/boot-quiet-logger';

/**
 * Builds the broker's HTTP app (not yet listening): used by `main.ts` and by the end-to-end
 * tests, so both run exactly the same pipeline. `logDestination` replaces stdout (tests read the log).
 */
export async function createBrokerApp(
  config: BrokerConfig,
  databaseUrl: string,
  logDestination?: DestinationStream,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, databaseUrl, logDestination),
    new PrototypedExpressAdapter(),
    {
      bufferLogs: true,
      // Bodies are read after authentication, by the guards (common/http/request-body.ts).
      bodyParser: false,
      abortOnError: false,
      // On close, idle keep-alive and streaming connections are cut rather than waited for.
      forceCloseConnections: true,
    },
  );
  app.useLogger(new BootQuietLogger(app.get(AppLogger)));
  app.disable('x-powered-by');
  // No ETag on the API's answers: Express hashes every body it sends for one (SHA-1), and no client of ours asks
  // with If-None-Match; the ops page's static files keep theirs (serve-static makes its own).
  app.set('etag', false);
  // The client address behind a proxy (TRUST_PROXY): `req.ip`, read by common/http/client-address.ts.
  app.set('trust proxy', config.trustProxy === 0 ? false : config.trustProxy);
  limitSlowClients(app.getHttpServer() as Server, config);
  // No answer of the API is for a cache to keep (keys, numbers, states); the ops page's files may be.
  app.use((request: Request, response: Response, next: () => void) => {
    if (!request.path.startsWith('/ops')) response.setHeader('Cache-Control', 'no-store');
    next();
  });
  // Before Swagger's routes are added below: they are the app's own, outside Nest's guards.
  if (config.metricsToken) app.use(['/metrics', '/docs'], requireMetricsToken(config.metricsToken, app.get(RateLimits)));

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

/**
 * A client that sends its headers or body slowly holds a socket (and what was read so far) only
 * this long; Node's own defaults are 60 s and 300 s, checked every 30 s.
 */
function limitSlowClients(server: Server, config: BrokerConfig): void {
  server.headersTimeout = config.http.headersTimeoutMs;
  server.requestTimeout = config.http.requestTimeoutMs;
  // Read when the server starts listening; a timeout is enforced within this interval of expiring.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(1_000, config.http.headersTimeoutMs);
}
