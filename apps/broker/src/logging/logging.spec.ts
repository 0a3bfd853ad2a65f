import type { LoggerService } from '@nestjs/common';
import { BootQuietLogger } from './boot-quiet-logger';
import { prettyLine } from './pretty-stream';

describe('prettyLine', () => {
  it('writes time, level, context and message, then the fields it did not show', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 30,
        time: Date.parse('2026-07-15T12:15:35.907Z'),
        pid: 1,
        hostname: 'h',
        context: 'Relay',
        msg: 'relayed',
        id: 'x',
      }),
    );
    expect(line).toBe('12:15:35.907 INFO  [Relay] relayed id=x\n');
  });

  it('summarises a request line', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 40,
        time: 0,
        msg: 'request completed',
        req: { id: 'r-1', method: 'POST', url: '/v1/sessions' },
        res: { statusCode: 422 },
        responseTime: 7,
      }),
    );
    expect(line).toBe('00:00:00.000 WARN  request completed POST /v1/sessions 422 7 ms (request r-1)\n');
  });

  it('leaves a line that is not JSON as it is', () => {
    expect(prettyLine('plain')).toBe('plain');
  });
});

describe('BootQuietLogger', () => {
  it("moves Nest's start-up lines to debug and passes every other line as it is", () => {
    const seen: string[] = [];
    const record =
      (level: string) =>
      (message: unknown, ...params: unknown[]) =>
        seen.push(`${level} ${String(message)} ${params.join(',')}`);
    const inner: LoggerService = { log: record('log'), error: record('error'), warn: record('warn'), debug: record('debug') };
    const logger = new BootQuietLogger(inner);
    logger.log('Mapped {/v1/sessions, POST} route', 'RouterExplorer');
    logger.log('SessionsModule dependencies initialized', 'InstanceLoader');
    logger.log('broker listening on http://127.0.0.1:3000');
    logger.log('seeded 20 proxy numbers', 'ProxyNumbersService');
    logger.warn('slow', 'RouterExplorer');
    expect(seen).toEqual([
      'debug Mapped {/v1/sessions, POST} route RouterExplorer',
      'debug SessionsModule dependencies initialized InstanceLoader',
      'log broker listening on http://127.0.0.1:3000 ',
      'log seeded 20 proxy numbers ProxyNumbersService',
      'warn slow RouterExplorer',
    ]);
  });
});
