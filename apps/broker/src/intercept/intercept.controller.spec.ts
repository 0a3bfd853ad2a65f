/** GET/PUT /v1/account/intercept-url as a client meets it: its own account's, public http(s) URLs only. */
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
import { CallbackUrlValidator } from '../notifications';
import { InterceptController } from './intercept.controller';
import { InterceptUrlRepository } from './intercept-url.repository';

describe('InterceptController', () => {
  const stored = new Map<string, string | null>();
  const urls = {
    get: jest.fn<InterceptUrlRepository['get']>((id) => Promise.resolve(stored.get(id) ?? null)),
    set: jest.fn<InterceptUrlRepository['set']>((id, url) => (stored.set(id, url), Promise.resolve())),
  };
  let ctx: ControllerContext;

  beforeAll(async () => {
    // The real URL check, with production's setting: no loopback or private targets.
    ctx = await controllerSetup([InterceptController], {
      providers: [{ provide: InterceptUrlRepository, useValue: urls }, CallbackUrlValidator],
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' },
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => urls.set.mockClear());

  it('is 401 without a key', async () => {
    expectProblem(await ctx.http().get('/v1/account/intercept-url'), 401);
    expectProblem(await ctx.http().put('/v1/account/intercept-url').send({ interceptUrl: null }), 401);
    expect(urls.set).not.toHaveBeenCalled();
  });

  it('PUT sets the key’s account’s URL (200); the other account still has none; null clears it', async () => {
    const res = await ctx
      .http()
      .put('/v1/account/intercept-url')
      .set(bearer(ACCOUNT.key))
      .send({ interceptUrl: 'https://example.com/intercept' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ interceptUrl: 'https://example.com/intercept' });
    expect((await ctx.http().get('/v1/account/intercept-url').set(bearer(ACCOUNT.key))).body).toEqual({
      interceptUrl: 'https://example.com/intercept',
    });
    expect((await ctx.http().get('/v1/account/intercept-url').set(bearer(OTHER_ACCOUNT.key))).body).toEqual({ interceptUrl: null });
    await ctx.http().put('/v1/account/intercept-url').set(bearer(ACCOUNT.key)).send({ interceptUrl: null }).expect(200);
    expect(stored.get(ACCOUNT.id)).toBeNull();
  });

  it.each([
    ['left out', {}],
    ['not a string', { interceptUrl: ['https://example.com'] }],
    ['not http(s)', { interceptUrl: 'ftp://example.com/intercept' }],
    ['a loopback address', { interceptUrl: 'http://127.0.0.1:8080/intercept' }],
    ['a private address', { interceptUrl: 'https://10.1.2.3/intercept' }],
    ['over 2048 characters', { interceptUrl: `https://example.com/${'x'.repeat(2048)}` }],
  ])('a URL %s is 400 naming interceptUrl, and nothing is stored', async (_case, body) => {
    expectInvalidFields(await ctx.http().put('/v1/account/intercept-url').set(bearer(ACCOUNT.key)).send(body), ['interceptUrl']);
    expect(urls.set).not.toHaveBeenCalled();
  });
});
