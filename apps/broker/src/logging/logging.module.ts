import { Global, Inject, Module, RequestMethod, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DestinationStream } from 'pino';
import { pinoHttp, type HttpLogger, type Options } from 'pino-http';
import type { BrokerConfig } from '../config';
import { AppLogger } from './app-logger';
import { redactRequest, serializeError } from './redact';
import { prettyStream } from './pretty-stream';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const HTTP_LOGGER = Symbol('HTTP_LOGGER');

/**
 * Structured logs (pino): JSON lines, or readable lines (LOG_FORMAT=pretty). Each request carries an id,
 * taken from `x-request-id` or made, echoed in the response, and ends with one completion line (pino-http).
 * Nest's `Logger` writes through the same pino logger (`AppLogger`). `destination` replaces stdout (tests).
 */
@Global()
@Module({})
export class LoggingModule implements NestModule {
  constructor(@Inject(HTTP_LOGGER) private readonly httpLogger: HttpLogger) {}

  static forRoot(config: Pick<BrokerConfig, 'logLevel' | 'logFormat'>, destination?: DestinationStream): DynamicModule {
    const options: Options = {
      level: config.logLevel,
      genReqId: (req: IncomingMessage, res: ServerResponse) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('x-request-id', id);
        return id;
      },
      // Health polls would drown the log.
      autoLogging: { ignore: (req: IncomingMessage) => /^\/health|^\/metrics|^\/v1\/health\/cpaas$/.test(req.url ?? '') },
      redact: ['req.headers.authorization', 'req.headers["x-admin-token"]', 'req.headers.cookie'],
      // A key sent in the query string, and the parameters of a failed SQL statement, stay out of the log.
      serializers: {
        req: redactRequest,
        err: serializeError,
      },
      customLogLevel: (_req: IncomingMessage, res: ServerResponse, err?: Error) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    };
    const httpLogger = config.logFormat === 'pretty' ? pinoHttp(options, prettyStream(destination)) : pinoHttp(options, destination);
    return {
      module: LoggingModule,
      providers: [
        { provide: HTTP_LOGGER, useValue: httpLogger },
        { provide: AppLogger, useValue: new AppLogger(httpLogger.logger) },
      ],
      exports: [AppLogger],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    // Every path, any method, 404s included (the routes nestjs-pino's LoggerModule used to log).
    consumer.apply(this.httpLogger).forRoutes({ path: '{/*splat}', method: RequestMethod.ALL });
  }
}
