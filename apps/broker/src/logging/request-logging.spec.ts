/**
 * What a request leaves in the log, through the real request middleware (request-log.ts), exception filter and Nest
 * logger, written to a captured destination instead of stdout: its id (taken or made, echoed), its
 * completion line, and any error line it caused naming it (`reqId`).
 */
import { Controller, Get, Logger, Module, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { ProblemDetailsFilter } from '../common/problem';
import { AppLogger } from './app-logger';
import { LoggingModule } from './logging.module';

interface Line {
  level: number;
  msg?: string;
  context?: string;
  reqId?: string;
  errorId?: string;
  err?: { message?: string };
  req?: { id?: string; url?: string; headers?: Record<string, string> };
  res?: { statusCode?: number };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

@Controller('example')
class ExampleController {
  private readonly logger = new Logger('Example');

  @Get('ok')
  ok(): { ok: true } {
    return { ok: true };
  }

  @Get('crash')
  crash(): never {
    throw new Error('database exploded');
  }

  @Get('note')
  note(): { ok: true } {
    this.logger.warn({ sessionId: 's-1' }, 'a note');
    return { ok: true };
  }
}

describe('request logging', () => {
  let app: INestApplication;
  const written: string[] = [];
  const lines = (): Line[] =>
    written
      .join('')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text) as Line);
  const ofRequest = (id: string) => lines().filter((line) => line.reqId === id || line.req?.id === id);

  beforeAll(async () => {
    @Module({
      imports: [LoggingModule.forRoot({ logLevel: 'info', logFormat: 'json' }, { write: (text: string) => void written.push(text) })],
      controllers: [ExampleController],
      providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    })
    class ExampleModule {}
    const moduleRef = await Test.createTestingModule({ imports: [ExampleModule] }).compile();
    app = moduleRef.createNestApplication({ bufferLogs: true });
    app.useLogger(app.get(AppLogger));
    await app.init();
  });
  afterAll(() => app.close());
  beforeEach(() => {
    written.length = 0;
  });

  it("logs a 5xx as one error line carrying the request's id and error id, then the request's completion line", async () => {
    const res = await request(app.getHttpServer()).get('/example/crash').set('x-request-id', 'req-5xx-1').expect(500);

    expect(res.headers['x-request-id']).toBe('req-5xx-1');
    const [errorLine, ...others] = ofRequest('req-5xx-1').filter((line) => line.context === 'ProblemDetails');
    expect(others).toEqual([]);
    expect(errorLine).toMatchObject({ level: 50, reqId: 'req-5xx-1', errorId: res.body.errorId, err: { message: 'database exploded' } });
    expect(errorLine.msg).toBe(`unhandled error ${res.body.errorId}`);
    const completion = ofRequest('req-5xx-1').filter((line) => line.msg === 'request errored' || line.msg === 'request completed');
    expect(completion).toEqual([expect.objectContaining({ level: 50, req: expect.objectContaining({ id: 'req-5xx-1' }) })]);
  });

  it('makes an id when none, or an unusable one, is sent, echoes it and logs the line with it', async () => {
    const made = await request(app.getHttpServer()).get('/example/crash').expect(500);
    expect(made.headers['x-request-id']).toMatch(UUID);
    const refused = await request(app.getHttpServer()).get('/example/crash').set('x-request-id', 'bad id with spaces').expect(500);
    expect(refused.headers['x-request-id']).toMatch(UUID);
    expect(refused.headers['x-request-id']).not.toBe(made.headers['x-request-id']);
    for (const res of [made, refused]) {
      expect(ofRequest(res.headers['x-request-id'] as string).map((line) => line.reqId ?? 'completion')).toEqual([
        res.headers['x-request-id'],
        'completion',
      ]);
    }
  });

  it('echoes a sane given id on a success and logs its completion line with it, at info', async () => {
    const res = await request(app.getHttpServer()).get('/example/ok').set('x-request-id', 'abc-123').expect(200);
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect(ofRequest('abc-123')).toEqual([
      expect.objectContaining({ level: 30, msg: 'request completed', res: expect.objectContaining({ statusCode: 200 }) }),
    ]);
  });

  it("writes Nest's Logger lines as pino JSON lines: context, the fields given, no request bound implicitly", async () => {
    await request(app.getHttpServer()).get('/example/note').set('x-request-id', 'req-note').expect(200);
    const note = lines().find((line) => line.msg === 'a note');
    expect(note).toMatchObject({ level: 40, context: 'Example', sessionId: 's-1' });
    expect(note).not.toHaveProperty('req');
    expect(note).not.toHaveProperty('reqId');
  });

  it('logs the headers and query parameters it knows to be harmless, and only the names of the others (issue #29)', async () => {
    await request(app.getHttpServer())
      .get('/example/ok?bearer=q-bearer-secret&limit=5&session_token=q-session&cursor=abc&x=q-unknown')
      .set('x-api-key', 'h-api-key-secret')
      .set('proxy-authorization', 'Basic aC1wcm94eS1zZWNyZXQ=')
      .set('x-auth-token', 'h-auth-token-secret')
      .set('x-twilio-signature', 'h-twilio-signature')
      .set('x-custom-thing', 'h-custom')
      .set('user-agent', 'probe/1.0')
      .set('x-request-id', 'req-allow')
      .expect(200);
    const text = written.join('');
    for (const secret of [
      'q-bearer-secret',
      'q-session',
      'q-unknown',
      'h-api-key-secret',
      'aC1wcm94eS1zZWNyZXQ=',
      'h-auth-token-secret',
      'h-twilio-signature',
      'h-custom',
    ])
      expect(text).not.toContain(secret);
    const [line] = ofRequest('req-allow');
    expect(line.req?.url).toBe('/example/ok?bearer=[REDACTED]&limit=5&session_token=[REDACTED]&cursor=abc&x=[REDACTED]');
    expect(line.req?.headers).toMatchObject({
      'user-agent': 'probe/1.0',
      'x-request-id': 'req-allow',
      'x-api-key': '[REDACTED]',
      'proxy-authorization': '[REDACTED]',
      'x-auth-token': '[REDACTED]',
      'x-twilio-signature': '[REDACTED]',
      'x-custom-thing': '[REDACTED]',
    });
  });

  it('keeps secrets out of the completion line: the authorization header and a key in the query string', async () => {
    await request(app.getHttpServer())
      .get('/example/ok?api_key=sk_live_secret&limit=5')
      .set('authorization', 'Bearer sk_live_header')
      .set('x-request-id', 'req-secret')
      .expect(200);
    const text = written.join('');
    expect(text).not.toContain('sk_live_secret');
    expect(text).not.toContain('sk_live_header');
    expect(ofRequest('req-secret')[0].req?.url).toBe('/example/ok?api_key=[REDACTED]&limit=5');
  });
});
