import { Global, Inject, Module, RequestMethod, type DynamicModule, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';
import type { BrokerConfig } from '../config';
import { AppLogger } from './app-logger';
import { redactRequest, serializeError } from './redact';
import { prettyStream } from './pretty-stream';
import { requestLog } from './request-log';

const PINO = Symbol('PINO');

/**
 * Structured logs (pino): JSON lines, or readable lines (LOG_FORMAT=pretty). Each request carries an id,
 * taken from `x-request-id` or made, echoed in the response, and ends with one completion line (request-log.ts).
 * Nest's `Logger` writes through the same pino logger (`AppLogger`). `destination` replaces stdout (tests).
 */
@Global()
@Module({})
export class LoggingModule implements NestModule {
  constructor(@Inject(PINO) private readonly logger: Logger) {}

  static forRoot(config: Pick<BrokerConfig, 'logLevel' | 'logFormat'>, destination?: DestinationStream): DynamicModule {
    const options = {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers["x-admin-token"]', 'req.headers.cookie'],
      // A request as the standard serializer maps it, then redacted: a key sent in the query string, and the
      // parameters of a failed SQL statement, stay out of the log.
      serializers: {
        req: stdSerializers.wrapRequestSerializer(redactRequest as never),
        res: stdSerializers.wrapResponseSerializer((res) => res),
        err: stdSerializers.wrapErrorSerializer(serializeError as never),
      },
    };
    const stream = config.logFormat === 'pretty' ? prettyStream(destination) : destination;
    const logger = stream ? pino(options, stream) : pino(options);
    return {
      module: LoggingModule,
      providers: [
        { provide: PINO, useValue: logger },
        { provide: AppLogger, useValue: new AppLogger(logger) },
      ],
      exports: [AppLogger],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    // Every path, any method, 404s included.
    consumer.apply(requestLog(this.logger)).forRoutes({ path: '{/*splat}', method: RequestMethod.ALL });
  }
}
