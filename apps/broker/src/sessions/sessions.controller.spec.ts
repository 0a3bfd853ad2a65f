/**
 * /v1/sessions as a client meets it: the API key, the body's validation, the answers' statuses. The
 * service and the idempotency record are mocked; what a create decides is in sessions.service.spec.ts and
 * the end-to-end suites.
 */
import { jest } from '@jest/globals';
import {
  ACCOUNT,
  OTHER_ACCOUNT,
  bearer,
  controllerSetup,
  expectInvalidFields,
  expectProblem,
  type ControllerContext,
} from '../../../../test/support/controller-context';
import { ProblemException } from '../common/problem';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { IdempotentAnswers } from '../idempotency/idempotent-answers';
import type { SessionDto } from './dto/session.dto';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

const ID = '7d9f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f';
const BODY = { channel: 'sms', participants: [{ number: '+2348030000001' }, { number: '+2348030000002' }] };
const SESSION: SessionDto = {
  id: ID,
  channels: ['sms'],
  channel: 'sms',
  status: 'active',
  expiredReason: null,
  provider: 'primary',
  proxyNumber: '+2349010000001',
  numberHistory: [{ provider: 'primary', proxyNumber: '+2349010000001', since: '2026-07-15T12:00:00.000Z', until: null }],
  participants: BODY.participants,
  createdAt: '2026-07-15T12:00:00.000Z',
  expiresAt: '2026-07-15T13:00:00.000Z',
  idleTtlSeconds: null,
  lastInteractionAt: null,
  uniqueName: null,
  callbackUrl: null,
  interceptUrl: null,
  metadata: {},
};
const notFound = () =>
  new ProblemException({
    status: 404,
    slug: 'session-not-found',
    title: 'Session not found',
    detail: 'No session with this id exists for your account.',
  });
/** The service's contract: a session is found for its own account only. */
const ownOnly = (accountId: string, id: string) =>
  accountId === ACCOUNT.id && id === ID ? Promise.resolve(SESSION) : Promise.reject(notFound());

describe('SessionsController', () => {
  const sessions = {
    create: jest.fn<SessionsService['create']>(),
    takeOver: jest.fn<SessionsService['takeOver']>(),
    list: jest.fn<SessionsService['list']>(),
    get: jest.fn<SessionsService['get']>(),
    close: jest.fn<SessionsService['close']>(),
  };
  const idempotency = { run: jest.fn<IdempotencyService['run']>() };
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([SessionsController], {
      providers: [
        { provide: SessionsService, useValue: sessions },
        { provide: IdempotencyService, useValue: idempotency },
        IdempotentAnswers,
      ],
      env: { RATE_LIMIT_CREATES_BURST: '5', RATE_LIMIT_CREATES_PER_SECOND: '1' },
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    for (const mock of [...Object.values(sessions), idempotency.run]) mock.mockReset();
    sessions.create.mockResolvedValue(SESSION);
    sessions.get.mockImplementation(ownOnly);
    sessions.close.mockImplementation(ownOnly);
    sessions.list.mockResolvedValue({ sessions: [SESSION], nextCursor: null });
    // Each test starts with full rate buckets.
    ctx.clock.advance(3_600_000);
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', {}],
      ['an unknown key', bearer('sk_test_nobody_0123456789abcdef')],
      ['another scheme', { authorization: `Basic ${ACCOUNT.key}` }],
    ])('%s is 401 problem+json with WWW-Authenticate, and nothing is created', async (_case, headers) => {
      const res = await ctx.http().post('/v1/sessions').set(headers).send(BODY);
      expectProblem(res, 401, '/problems/unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(sessions.create).not.toHaveBeenCalled();
    });

    it('every route asks for the key', async () => {
      for (const [method, path] of [
        ['get', '/v1/sessions'],
        ['get', `/v1/sessions/${ID}`],
        ['delete', `/v1/sessions/${ID}`],
      ] as const) {
        expectProblem(await ctx.http()[method](path), 401);
      }
      expect(Object.values(sessions).every((mock) => mock.mock.calls.length === 0)).toBe(true);
    });

    it('a body sent without a key is not read: a larger one than any route takes is still 401, not 413', async () => {
      const res = await ctx
        .http()
        .post('/v1/sessions')
        .set('content-type', 'application/json')
        .send(JSON.stringify({ metadata: { blob: 'x'.repeat(ctx.config.requestBodyLimitBytes + 1) } }));
      expectProblem(res, 401);
    });

    it('creates beyond the key’s burst are 429 with Retry-After; reads keep their own bucket', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await ctx.http().post('/v1/sessions').set(bearer(ACCOUNT.key)).send(BODY)).status);
      expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
      const refused = await ctx.http().post('/v1/sessions').set(bearer(ACCOUNT.key)).send(BODY);
      expectProblem(refused, 429, '/problems/rate-limited');
      expect(refused.headers['retry-after']).toBe('1');
      expect((await ctx.http().get('/v1/sessions').set(bearer(ACCOUNT.key))).status).toBe(200);
      // The other account's key has a bucket of its own.
      expect((await ctx.http().post('/v1/sessions').set(bearer(OTHER_ACCOUNT.key)).send(BODY)).status).toBe(201);
    });
  });

  describe('POST /v1/sessions', () => {
    it('is 201 with the session, created for the key’s account', async () => {
      const res = await ctx.http().post('/v1/sessions').set(bearer(ACCOUNT.key)).send(BODY);
      expect(res.status).toBe(201);
      expect(res.body).toEqual(SESSION);
      expect(sessions.create).toHaveBeenCalledTimes(1);
      const [accountId, body, key] = sessions.create.mock.calls[0];
      expect([accountId, key]).toEqual([ACCOUNT.id, null]);
      expect(body).toMatchObject(BODY);
    });

    it.each([
      ['one participant', { ...BODY, participants: [BODY.participants[0]] }, ['participants']],
      ['the same number twice', { ...BODY, participants: [BODY.participants[0], BODY.participants[0]] }, ['participants']],
      [
        'a number that is not a phone number',
        { ...BODY, participants: [{ number: 'call me' }, BODY.participants[1]] },
        ['participants[0].number'],
      ],
      ['no channel at all', { participants: BODY.participants }, ['channels']],
      ['a channel that does not exist', { ...BODY, channel: 'fax' }, ['channel']],
      ['a ttl under a minute', { ...BODY, ttlSeconds: 59 }, ['ttlSeconds']],
      ['a ttl over 7 days', { ...BODY, ttlSeconds: 7 * 24 * 3600 + 1 }, ['ttlSeconds']],
      ['a callback URL that is not http(s)', { ...BODY, callbackUrl: 'ftp://example.com/hooks' }, ['callbackUrl']],
      ['metadata that is not an object', { ...BODY, metadata: 'ride-42' }, ['metadata']],
      ['a field the API does not have', { ...BODY, priority: 'high' }, ['priority']],
      ['two bad fields', { ...BODY, ttlSeconds: 'soon', numberSelection: 'cheapest' }, ['ttlSeconds', 'numberSelection']],
    ])('%s is 400 naming the field, and nothing is created', async (_case, body, fields) => {
      const res = await ctx.http().post('/v1/sessions').set(bearer(ACCOUNT.key)).send(body);
      expectInvalidFields(res, fields);
      expect(sessions.create).not.toHaveBeenCalled();
    });

    it('a body that is not JSON is 400; a body of another media type is 415', async () => {
      const malformed = await ctx
        .http()
        .post('/v1/sessions')
        .set(bearer(ACCOUNT.key))
        .set('content-type', 'application/json')
        .send('{"channel":');
      expectProblem(malformed, 400, '/problems/entity-parse-failed');
      const text = await ctx.http().post('/v1/sessions').set(bearer(ACCOUNT.key)).set('content-type', 'text/plain').send('sms please');
      expectProblem(text, 415, '/problems/unsupported-media-type');
      expect(sessions.create).not.toHaveBeenCalled();
    });

    it('a body over REQUEST_BODY_LIMIT_BYTES is 413 once the key is accepted', async () => {
      const res = await ctx
        .http()
        .post('/v1/sessions')
        .set(bearer(ACCOUNT.key))
        .set('content-type', 'application/json')
        .send(JSON.stringify({ ...BODY, metadata: { blob: 'x'.repeat(ctx.config.requestBodyLimitBytes) } }));
      expectProblem(res, 413);
    });

    it('with an Idempotency-Key the answer is the key’s record, bound to the account, the key and the body', async () => {
      idempotency.run.mockResolvedValue(SESSION);
      const res = await ctx.http().post('/v1/sessions').set(bearer(ACCOUNT.key)).set('Idempotency-Key', 'ride-42').send(BODY);
      expect(res.status).toBe(201);
      expect(res.body).toEqual(SESSION);
      expect(idempotency.run).toHaveBeenCalledTimes(1);
      const [accountId, key, body] = idempotency.run.mock.calls[0];
      expect([accountId, key]).toEqual([ACCOUNT.id, 'ride-42']);
      expect(body).toMatchObject(BODY);
      // The record's first run is the create, with the key.
      await idempotency.run.mock.calls[0][3]();
      expect(sessions.create.mock.calls[0][2]).toBe('ride-42');
    });

    it('with an Idempotency-Key a body the pipes refuse is their 400, and the key is never claimed', async () => {
      const res = await ctx
        .http()
        .post('/v1/sessions')
        .set(bearer(ACCOUNT.key))
        .set('Idempotency-Key', 'ride-43')
        .send({ ...BODY, ttlSeconds: 5 });
      expectInvalidFields(res, ['ttlSeconds']);
      expect(idempotency.run).not.toHaveBeenCalled();
      expect(sessions.create).not.toHaveBeenCalled();
    });

    it('a failure the service names reaches the client as its problem', async () => {
      sessions.create.mockRejectedValue(
        new ProblemException({
          status: 503,
          slug: 'pool-exhausted',
          title: 'Pool exhausted',
          detail: 'No proxy number is free on any provider.',
        }),
      );
      const res = await ctx.http().post('/v1/sessions').set(bearer(ACCOUNT.key)).send(BODY);
      expectProblem(res, 503, '/problems/pool-exhausted');
      expect(res.headers['retry-after']).toBe('5');
    });

    it('an unexpected error is a 500 whose errorId the client can quote, with nothing of the error in it', async () => {
      sessions.create.mockRejectedValue(new Error('connection string postgres://user:secret@db/broker'));
      const res = await ctx.http().post('/v1/sessions').set(bearer(ACCOUNT.key)).send(BODY);
      expectProblem(res, 500);
      expect(res.body.errorId).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
      expect(JSON.stringify(res.body)).not.toContain('secret');
    });
  });

  describe('GET /v1/sessions', () => {
    it('is 200 with the page, for the key’s account, the query read as numbers and names', async () => {
      const res = await ctx.http().get('/v1/sessions?status=active&limit=10&uniqueName=ride-42').set(bearer(ACCOUNT.key));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ sessions: [SESSION], nextCursor: null });
      expect(sessions.list).toHaveBeenCalledWith(
        ACCOUNT.id,
        expect.objectContaining({ status: 'active', limit: 10, uniqueName: 'ride-42' }),
      );
    });

    it.each([
      ['status=open', ['status']],
      ['limit=0', ['limit']],
      ['limit=201', ['limit']],
      ['limit=1e1', ['limit']],
      ['cursor=not%20a%20cursor', ['cursor']],
      ['page=2', ['page']],
    ])('?%s is 400 naming the parameter', async (query, fields) => {
      expectInvalidFields(await ctx.http().get(`/v1/sessions?${query}`).set(bearer(ACCOUNT.key)), fields);
      expect(sessions.list).not.toHaveBeenCalled();
    });
  });

  describe.each([
    ['get', ''],
    ['delete', ''],
  ] as const)('%s /v1/sessions/:id%s', (method, suffix) => {
    it('is 200 for the session’s own account', async () => {
      const res = await ctx.http()[method](`/v1/sessions/${ID}${suffix}`).set(bearer(ACCOUNT.key));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(SESSION);
    });

    it('is 404 for another account, as for a session that does not exist', async () => {
      const other = await ctx.http()[method](`/v1/sessions/${ID}${suffix}`).set(bearer(OTHER_ACCOUNT.key));
      const missing = await ctx.http()[method](`/v1/sessions/0b7f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f${suffix}`).set(bearer(ACCOUNT.key));
      expectProblem(other, 404, '/problems/session-not-found');
      expect(missing.body).toEqual(other.body);
    });

    it('is 404 for an id that is no session id, without asking the service', async () => {
      const res = await ctx.http()[method](`/v1/sessions/not-a-session${suffix}`).set(bearer(ACCOUNT.key));
      expectProblem(res, 404, '/problems/session-not-found');
      expect(Object.values(sessions).every((mock) => mock.mock.calls.length === 0)).toBe(true);
    });
  });
});
