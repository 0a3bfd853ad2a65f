import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsIn, IsString, Matches, ValidateNested } from 'class-validator';
import request from 'supertest';
import { ProblemException } from './problem';
import { ProblemDetailsFilter } from './problem-details.filter';
import { createValidationPipe } from './validation';

class ParticipantDto {
  @Matches(/^\+[1-9]\d{6,14}$/, { message: 'must be an E.164 number' })
  number: string;
}

class ExampleDto {
  @IsIn(['sms', 'voice'])
  channel: string;

  @ValidateNested({ each: true })
  @Type(() => ParticipantDto)
  @ArrayMinSize(2)
  @ArrayMaxSize(2)
  participants: ParticipantDto[];

  @IsString()
  note: string;
}

@Controller('example')
class ExampleController {
  @Post()
  create(@Body() body: ExampleDto): ExampleDto {
    return body;
  }

  @Get('conflict')
  conflict(): never {
    throw new ProblemException({
      status: 409,
      slug: 'session-closed',
      title: 'Already closed',
      detail: 'Session s1 is closed.',
      extensions: { sessionId: 's1' },
    });
  }

  @Get('crash')
  crash(): never {
    throw new Error('database exploded');
  }
}

@Module({
  controllers: [ExampleController],
  providers: [
    { provide: APP_FILTER, useClass: ProblemDetailsFilter },
    { provide: APP_PIPE, useFactory: createValidationPipe },
  ],
})
class ExampleModule {}

describe('ProblemDetailsFilter with the validation pipe', () => {
  let app: INestApplication;
  const logged: unknown[] = [];

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ExampleModule] }).compile();
    app = moduleRef.createNestApplication({
      logger: {
        log: () => undefined,
        warn: () => undefined,
        error: (...args: unknown[]) => logged.push(args),
        debug: () => undefined,
        verbose: () => undefined,
      },
    });
    await app.init();
  });
  afterAll(() => app.close());

  it('names every bad field, nested ones by path, and refuses unknown fields', async () => {
    const res = await request(app.getHttpServer())
      .post('/example')
      .send({ channel: 'fax', participants: [{ number: '+2348030000001' }, { number: '0803' }], note: 'x', extra: true });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: '/problems/validation-error', title: 'Invalid request', status: 400 });
    const fields = (res.body.errors as Array<{ field: string; message: string }>).map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['channel', 'participants[1].number', 'extra']));
    expect(res.body.errors).toContainEqual({ field: 'extra', message: 'is not allowed' });
    expect(res.body.errors).toContainEqual({ field: 'participants[1].number', message: 'must be an E.164 number' });
  });

  it('writes a ProblemException as it is, with its extensions', async () => {
    const res = await request(app.getHttpServer()).get('/example/conflict').expect(409);
    expect(res.body).toEqual({
      type: '/problems/session-closed',
      title: 'Already closed',
      status: 409,
      detail: 'Session s1 is closed.',
      sessionId: 's1',
    });
  });

  it('answers an unexpected error with a 500 whose error id is also in the log', async () => {
    const res = await request(app.getHttpServer()).get('/example/crash').expect(500);
    expect(res.body).toMatchObject({ type: 'about:blank', title: 'Internal server error', status: 500 });
    expect(res.body.detail).not.toContain('database exploded');
    expect(res.body.errorId).toMatch(/^[0-9a-f-]{36}$/);
    const entry = logged
      .map((args) => (args as [{ errorId?: string; err?: Error }])[0])
      .find((fields) => fields.errorId === res.body.errorId);
    expect(entry?.err?.message).toBe('database exploded');
  });
});
