import { Module, RequestMethod, type DynamicModule } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { BrokerConfig } from '../config';
import { redactUrl, serializeError } from './redact';
import { prettyStream } from './pretty-stream';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's id: its `x-request-id` when that is a sane one, else a new UUID. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Structured logs (pino): JSON lines, or readable lines (LOG_FORMAT=pretty); each request carries an id, taken from `x-request-id` or made. */
@Module({})
export class LoggingModule {
  static forRoot(config: Pick<BrokerConfig, 'logLevel' | 'logFormat'>): DynamicModule {
    const options = {
      level: config.logLevel,
      // The request id is Fastify's (`requestId`, broker-app.ts), which pino-http takes as it finds it.
      // Health polls would drown the log. Fastify's middleware sees the path matched so far as `url`.
      autoLogging: {
        ignore: (req: IncomingMessage & { originalUrl?: string }) =>
          /^\/health|^\/metrics|^\/v1\/health\/cpaas$/.test(req.originalUrl ?? req.url ?? ''),
      },
      redact: ['req.headers.authorization', 'req.headers["x-admin-token"]', 'req.headers.cookie'],
      // A key sent in the query string, and the parameters of a failed SQL statement, stay out of the log.
      serializers: {
        req: (req: { url?: string }) => ({ ...req, url: redactUrl(req.url) }),
        err: serializeError,
      },
      customLogLevel: (_req: IncomingMessage, res: ServerResponse, err?: Error) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    };
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          // Every route; nestjs-pino's default ("{/*splat}") matches none under Fastify's middleware (@fastify/middie).
          forRoutes: [{ path: '/{*splat}', method: RequestMethod.ALL }],
          pinoHttp: config.logFormat === 'pretty' ? [options, prettyStream()] : options,
        }),
      ],
    };
  }
}
