import { jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino } from 'pino';
import { requestLog } from './request-log';

/** A request and its response as the middleware sees them: headers in, a status and events out. */
function exchange(url: string, headers: Record<string, string> = {}) {
  const req = Object.assign(new EventEmitter(), { url, headers, readableAborted: false }) as unknown as IncomingMessage & { id?: string };
  const sent: Record<string, string> = {};
  const res = Object.assign(new EventEmitter(), {
    statusCode: 200,
    writableEnded: true,
    setHeader: (name: string, value: string) => void (sent[name] = value),
    getHeaders: () => sent,
  }) as unknown as ServerResponse;
  return { req, res, sent };
}

describe('requestLog', () => {
  const written: string[] = [];
  const logger = (level: string) => pino({ level }, { write: (text: string) => void written.push(text) });
  beforeEach(() => (written.length = 0));

  it('below its level builds no child logger and writes nothing; at its level writes one line with the request', () => {
    const quiet = logger('warn');
    const child = jest.spyOn(quiet, 'child');
    const ok = exchange('/v1/sessions', { 'x-request-id': 'req-1' });
    requestLog(quiet)(ok.req, ok.res, () => undefined);
    ok.res.emit('finish');
    expect(child).not.toHaveBeenCalled();
    expect(written).toEqual([]);
    expect(ok.req.id).toBe('req-1');
    expect(ok.sent['x-request-id']).toBe('req-1');

    const refused = exchange('/v1/sessions');
    requestLog(quiet)(refused.req, refused.res, () => undefined);
    refused.res.statusCode = 422;
    refused.res.emit('finish');
    refused.res.emit('close');
    expect(child).toHaveBeenCalledTimes(1);
    expect(written.map((text) => JSON.parse(text))).toEqual([
      expect.objectContaining({ level: 40, msg: 'request completed', req: expect.objectContaining({ id: refused.req.id }) }),
    ]);
  });

  it('logs a 5xx at error, health polls never, and a request still open at close as aborted', () => {
    const log = logger('info');
    for (const url of ['/health/ready', '/metrics', '/v1/health/cpaas', '/v1/sessions']) {
      const { req, res } = exchange(url);
      requestLog(log)(req, res, () => undefined);
      res.statusCode = url === '/v1/sessions' ? 503 : 200;
      res.emit('finish');
    }
    const aborted = exchange('/v1/sessions/abc');
    Object.assign(aborted.res, { writableEnded: false });
    requestLog(log)(aborted.req, aborted.res, () => undefined);
    aborted.res.emit('close');
    expect(written.map((text) => JSON.parse(text))).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'request errored',
        err: expect.objectContaining({ message: 'failed with status code 503' }),
      }),
      expect.objectContaining({ level: 30, msg: 'request aborted' }),
    ]);
  });
});
