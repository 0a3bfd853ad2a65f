import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import type { BrokerConfig } from './config';
import { leaveBodiesUnread } from './common/http';
import { PROBLEM_CONTENT_TYPE } from './common/problem';
import { BootQuietLogger } from './logging/boot-quiet-logger';
import { requestId } from './logging/logging.module';

/** Node's own limit on a request's head (16 KB) bounds a path parameter, as it did on Express. */
const MAX_PARAM_LENGTH = 16 * 1024;

/**
 * Builds the broker's HTTP app (not yet listening): used by `main.ts` and by the end-to-end
 * tests, so both run exactly the same pipeline. The platform is Fastify: the broker's CPU per session
 * create was 0.76-0.84 of Express's, rounds interleaved in one run (`npm run bench:sessions -- --against=DIR`).
 */
export async function createBrokerApp(config: BrokerConfig, databaseUrl: string): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, databaseUrl), createHttpAdapter(), {
    bufferLogs: true,
    // Bodies are read after authentication, by the guards (common/http/request-body.ts).
    bodyParser: false,
    abortOnError: false,
    // On close, idle keep-alive and streaming connections are cut rather than waited for.
    forceCloseConnections: true,
  });
  app.useLogger(new BootQuietLogger(app.get(Logger)));
  limitSlowClients(app.getHttpServer() as Server, config);

  const openApi = new DocumentBuilder()
    .setTitle('Session Broker')
    .setDescription('Number-masked voice and SMS sessions across CPaaS providers, with failover by circuit breaker.')
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key' }, 'api-key')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' }, 'admin-token')
    .build();
  // The page itself is DocsModule's (docs/docs.controller.ts).
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, openApi), { jsonDocumentUrl: 'docs/openapi.json', ui: false });
  return app;
}

/**
 * Fastify, routing and answering as the broker did on Express: paths case-insensitive, a trailing
 * slash ignored, no length limit on a path parameter, Node's keep-alive timeout, and a path that does
 * not decode answered with a 400 problem.
 */
function createHttpAdapter(): FastifyAdapter {
  const adapter = new FastifyAdapter({
    // The request id the logs carry (`x-request-id` when valid), made once for Fastify and pino-http.
    genReqId: requestId,
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    keepAliveTimeout: 5_000,
    // Answered by the router, before any hook or filter.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      reply.raw.setHeader('x-request-id', request.id);
      const problem = { type: 'about:blank', title: 'Bad request', status: 400, detail: `The path does not decode: ${error.message}.` };
      void reply.status(400).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
    },
  });
  const fastify = adapter.getInstance();
  leaveBodiesUnread(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.raw.setHeader('x-request-id', request.id);
    done();
  });
  return adapter;
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
