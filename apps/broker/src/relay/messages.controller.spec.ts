/** POST /v1/sessions/:id/messages as a client meets it: the key, the body, 202, the Idempotency-Key's binding. */
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
import type { InteractionDto } from './dto/interaction.dto';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';

const SESSION = '7d9f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f';
const BODY = { to: '+2348030000001', text: 'Your driver has arrived' };
const SENT: InteractionDto = {
  id: '5e1f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f',
  channel: 'sms',
  from: '+2349010000001',
  to: BODY.to,
  status: 'pending',
  createdAt: '2026-07-15T12:00:00.000Z',
};

describe('MessagesController', () => {
  const messages = { send: jest.fn<MessagesService['send']>(), sentWith: jest.fn<MessagesService['sentWith']>() };
  const idempotency = { run: jest.fn<IdempotencyService['run']>() };
  let ctx: ControllerContext;
  const path = `/v1/sessions/${SESSION}/messages`;

  beforeAll(async () => {
    ctx = await controllerSetup([MessagesController], {
      providers: [
        { provide: MessagesService, useValue: messages },
        { provide: IdempotencyService, useValue: idempotency },
        IdempotentAnswers,
      ],
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    idempotency.run.mockReset();
    messages.sentWith.mockReset();
    messages.send
      .mockReset()
      .mockImplementation((accountId, sessionId) =>
        accountId === ACCOUNT.id && sessionId === SESSION
          ? Promise.resolve(SENT)
          : Promise.reject(
              new ProblemException({ status: 404, slug: 'session-not-found', title: 'Session not found', detail: 'No session.' }),
            ),
      );
  });

  it('without a key is 401 and nothing is sent', async () => {
    expectProblem(await ctx.http().post(path).send(BODY), 401);
    expect(messages.send).not.toHaveBeenCalled();
  });

  it('is 202 with the interaction, sent into the key’s account’s session', async () => {
    const res = await ctx.http().post(path).set(bearer(ACCOUNT.key)).send(BODY);
    expect(res.status).toBe(202);
    expect(res.body).toEqual(SENT);
    expect(messages.send).toHaveBeenCalledWith(ACCOUNT.id, SESSION, expect.objectContaining(BODY), null);
  });

  it('is 404 for another account’s session, and for an id that is no session id', async () => {
    expectProblem(await ctx.http().post(path).set(bearer(OTHER_ACCOUNT.key)).send(BODY), 404, '/problems/session-not-found');
    messages.send.mockClear();
    expectProblem(
      await ctx.http().post('/v1/sessions/42/messages').set(bearer(ACCOUNT.key)).send(BODY),
      404,
      '/problems/session-not-found',
    );
    expect(messages.send).not.toHaveBeenCalled();
  });

  it.each([
    ['no to', { text: BODY.text }, ['to']],
    ['a to that is no phone number', { ...BODY, to: 'the driver' }, ['to']],
    ['an empty text', { ...BODY, text: '' }, ['text']],
    ['a text over 1600 characters', { ...BODY, text: 'x'.repeat(1601) }, ['text']],
    ['a text that is not a string', { ...BODY, text: 42 }, ['text']],
    ['a field the API does not have', { ...BODY, from: '+2349010000001' }, ['from']],
  ])('%s is 400 naming the field, and nothing is sent', async (_case, body, fields) => {
    expectInvalidFields(await ctx.http().post(path).set(bearer(ACCOUNT.key)).send(body), fields);
    expect(messages.send).not.toHaveBeenCalled();
  });

  it('with an Idempotency-Key the key is bound to the session and the message, and a first answer is kept as 202', async () => {
    idempotency.run.mockResolvedValue(SENT);
    const res = await ctx.http().post(path).set(bearer(ACCOUNT.key)).set('Idempotency-Key', 'msg-1').send(BODY);
    expect(res.status).toBe(202);
    const [accountId, key, boundTo, , , status] = idempotency.run.mock.calls[0];
    expect([accountId, key, status]).toEqual([ACCOUNT.id, 'msg-1', 202]);
    expect(boundTo).toEqual({ message: { sessionId: SESSION, ...BODY } });
  });
});
