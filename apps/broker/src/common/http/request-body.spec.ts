import { Body, Controller, Injectable, Module, Post, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import type { Request, Response } from 'express';
import request from 'supertest';
import { BROKER_CONFIG } from '../../config';
import { ProblemDetailsFilter } from '../problem';
import { READS_BODY_AFTER_AUTHENTICATION, RequestBodyGuard, RequestBodyReader, UNAUTHENTICATED_BODY_LIMIT_BYTES } from './request-body';

const LIMIT = 200 * 1024;
const config = { requestBodyLimitBytes: LIMIT };

/** Stands for ApiKeyGuard: refuses without `x-ok`, else reads the body as an authenticated caller's. */
@Injectable()
class AuthenticatingGuard implements CanActivate {
  static readonly [READS_BODY_AFTER_AUTHENTICATION] = true;
  private readonly body = new RequestBodyReader(config);

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    if (req.headers['x-ok'] === undefined) return false;
    await this.body.read(req, http.getResponse<Response>(), true);
    return true;
  }
}

@Controller('open')
class OpenController {
  @Post()
  echo(@Body() body: unknown): unknown {
    return { body: body ?? null };
  }
}

@UseGuards(AuthenticatingGuard)
@Controller('guarded')
class GuardedController {
  @Post()
  echo(@Body() body: unknown): unknown {
    return { body: body ?? null };
  }
}

@Module({
  controllers: [OpenController, GuardedController],
  providers: [
    { provide: BROKER_CONFIG, useValue: config },
    { provide: APP_FILTER, useClass: ProblemDetailsFilter },
    { provide: APP_GUARD, useClass: RequestBodyGuard },
  ],
})
class ExampleModule {}

describe('request bodies, read after authentication', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ExampleModule] }).compile();
    app = moduleRef.createNestApplication({ bodyParser: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('reads the body of a route without an authenticating guard, up to the unauthenticated limit', async () => {
    await request(app.getHttpServer())
      .post('/open')
      .send({ a: 1 })
      .expect(201, { body: { a: 1 } });
    const justOver = 'x'.repeat(UNAUTHENTICATED_BODY_LIMIT_BYTES);
    const res = await request(app.getHttpServer()).post('/open').send({ a: justOver });
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('leaves the body of a guarded route to its guard: unread when refused, read with the larger limit when accepted', async () => {
    await request(app.getHttpServer()).post('/guarded').send({ a: 1 }).expect(403);
    const large = 'x'.repeat(UNAUTHENTICATED_BODY_LIMIT_BYTES);
    await request(app.getHttpServer())
      .post('/guarded')
      .set('x-ok', '1')
      .send({ a: large })
      .expect(201, { body: { a: large } });
    const res = await request(app.getHttpServer())
      .post('/guarded')
      .set('x-ok', '1')
      .send({ a: 'x'.repeat(LIMIT) });
    expect(res.status).toBe(413);
  });

  it('reads each accepted type with its own parser: JSON, a +json type, a form with a charset', async () => {
    const post = () => request(app.getHttpServer()).post('/open');
    await post()
      .set('content-type', 'application/json')
      .send('{"a":[1]}')
      .expect(201, { body: { a: [1] } });
    await post()
      .set('content-type', 'application/vnd.example+json')
      .send('{"a":2}')
      .expect(201, { body: { a: 2 } });
    await post()
      .set('content-type', 'application/x-www-form-urlencoded; charset=utf-8')
      .send('To=%2B2348030000001&Body=at+the+gate')
      .expect(201, { body: { To: '+2348030000001', Body: 'at the gate' } });
    // A form is not JSON to the JSON parser, nor JSON a form to the form parser: each is read by its type alone.
    await post()
      .set('content-type', 'application/x-www-form-urlencoded')
      .send('{"a":1}')
      .expect(201, { body: { '{"a":1}': '' } });
    expect((await post().set('content-type', 'application/json').send('a=1')).status).toBe(400);
  });

  it('answers a body of another content type with 415 on either kind of route', async () => {
    for (const path of ['/open', '/guarded'])
      await request(app.getHttpServer()).post(path).set('x-ok', '1').set('content-type', 'text/plain').send('hello').expect(415);
  });
});
