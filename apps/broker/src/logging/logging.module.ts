import { Module, type DynamicModule } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { BrokerConfig } from '../config';
import { redactUrl, serializeError } from './redact';
import { prettyStream } from './pretty-stream';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Structured logs (pino): JSON lines, or readable lines (LOG_FORMAT=pretty); each request carries an id, taken from `x-request-id` or made. */
@Module({})
export class LoggingModule {
  static forRoot(config: Pick<BrokerConfig, 'logLevel' | 'logFormat'>): DynamicModule {
    const options = {
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
          pinoHttp: config.logFormat === 'pretty' ? [options, prettyStream()] : options,
        }),
      ],
    };
  }
}
