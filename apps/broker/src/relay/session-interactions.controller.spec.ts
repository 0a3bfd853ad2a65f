/**
 * GET /v1/sessions/:id/interactions as a client meets it: the API key, the session's own account only, the
 * page parameters. The read is mocked; what it finds is in the end-to-end suites.
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
import { SessionInteractions } from './session-interactions';
import { SessionInteractionsController } from './session-interactions.controller';

const ID = '7d9f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f';
const notFound = () =>
  new ProblemException({
    status: 404,
    slug: 'session-not-found',
    title: 'Session not found',
    detail: 'No session with this id exists for your account.',
  });

describe('SessionInteractionsController', () => {
  const pages = { page: jest.fn<SessionInteractions['page']>() };
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([SessionInteractionsController], { providers: [{ provide: SessionInteractions, useValue: pages }] });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    pages.page.mockReset();
    /** The read's contract: a session is found for its own account only. */
    pages.page.mockImplementation((accountId, id) =>
      accountId === ACCOUNT.id && id === ID ? Promise.resolve({ interactions: [], nextCursor: null }) : Promise.reject(notFound()),
    );
  });

  it('asks for the key', async () => {
    expectProblem(await ctx.http().get(`/v1/sessions/${ID}/interactions`), 401);
    expect(pages.page).not.toHaveBeenCalled();
  });

  it('is 200 for the session’s own account', async () => {
    const res = await ctx.http().get(`/v1/sessions/${ID}/interactions`).set(bearer(ACCOUNT.key));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ interactions: [], nextCursor: null });
  });

  it('is 404 for another account, as for a session that does not exist', async () => {
    const other = await ctx.http().get(`/v1/sessions/${ID}/interactions`).set(bearer(OTHER_ACCOUNT.key));
    const missing = await ctx.http().get(`/v1/sessions/0b7f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f/interactions`).set(bearer(ACCOUNT.key));
    expectProblem(other, 404, '/problems/session-not-found');
    expect(missing.body).toEqual(other.body);
  });

  it('is 404 for an id that is no session id, without asking the service', async () => {
    const res = await ctx.http().get(`/v1/sessions/not-a-session/interactions`).set(bearer(ACCOUNT.key));
    expectProblem(res, 404, '/problems/session-not-found');
    expect(pages.page).not.toHaveBeenCalled();
  });

  it('reads its page parameters', async () => {
    expectInvalidFields(await ctx.http().get(`/v1/sessions/${ID}/interactions?limit=500`).set(bearer(ACCOUNT.key)), ['limit']);
    await ctx.http().get(`/v1/sessions/${ID}/interactions?limit=20&cursor=abc_-1`).set(bearer(ACCOUNT.key)).expect(200);
    expect(pages.page).toHaveBeenCalledWith(ACCOUNT.id, ID, expect.objectContaining({ limit: 20, cursor: 'abc_-1' }));
  });
});
