/** The account's webhook routes as a client meets them: events, deliveries, the callback URL and the signing secret. */
import { jest } from '@jest/globals';
import {
  ACCOUNT,
  OTHER_ACCOUNT,
  bearer,
  controllerSetup,
  expectInvalidFields,
  expectProblem,
  type ControllerContext,
} from '../../../../../test/support/controller-context';
import { ProblemException } from '../../common/problem';
import { WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import { DefaultCallbackUrls } from '../targets/default-callback-urls';
import { WebhookHistory } from './webhook-history';
import { WebhooksController } from './webhooks.controller';

const SESSION = '7d9f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f';
const DELIVERY = '5e1f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f';
const SECRET = { secret: 'whsec_abc', createdAt: '2026-07-15T12:00:00.000Z', previousSecretExpiresAt: null };

describe('WebhooksController', () => {
  const history = { listEvents: jest.fn<WebhookHistory['listEvents']>(), getDelivery: jest.fn<WebhookHistory['getDelivery']>() };
  const callbackUrls = { get: jest.fn<DefaultCallbackUrls['get']>(), set: jest.fn<DefaultCallbackUrls['set']>() };
  const secrets = {
    reveal: jest.fn<WebhookSecrets['reveal']>(),
    status: jest.fn<WebhookSecrets['status']>(),
    rotate: jest.fn<WebhookSecrets['rotate']>(),
  };
  const mocks = [...Object.values(history), ...Object.values(callbackUrls), ...Object.values(secrets)];
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([WebhooksController], {
      providers: [
        { provide: WebhookHistory, useValue: history },
        { provide: DefaultCallbackUrls, useValue: callbackUrls },
        { provide: WebhookSecrets, useValue: secrets },
      ],
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    for (const mock of mocks) mock.mockReset();
    history.listEvents.mockResolvedValue({ events: [], nextCursor: null });
    callbackUrls.set.mockImplementation((_account, callbackUrl) => Promise.resolve({ callbackUrl }));
  });

  it('every route is 401 without a key, and none is asked', async () => {
    for (const [method, path] of [
      ['get', '/v1/events'],
      ['get', `/v1/deliveries/${DELIVERY}`],
      ['get', '/v1/account/callback-url'],
      ['put', '/v1/account/callback-url'],
      ['post', '/v1/account/webhook-secret/reveal'],
      ['get', '/v1/account/webhook-secret'],
      ['post', '/v1/account/webhook-secret/rotate'],
    ] as const)
      expectProblem(await ctx.http()[method](path), 401);
    expect(mocks.every((m) => m.mock.calls.length === 0)).toBe(true);
  });

  it('GET /v1/events lists the key’s account’s events, one session’s when asked', async () => {
    const res = await ctx.http().get(`/v1/events?session=${SESSION}&limit=5`).set(bearer(OTHER_ACCOUNT.key));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ events: [], nextCursor: null });
    expect(history.listEvents).toHaveBeenCalledWith(OTHER_ACCOUNT.id, expect.objectContaining({ session: SESSION, limit: 5 }));
  });

  it.each([
    ['session=ride-42', ['session']],
    ['limit=many', ['limit']],
  ])('GET /v1/events?%s is 400 naming the parameter', async (query, fields) => {
    expectInvalidFields(await ctx.http().get(`/v1/events?${query}`).set(bearer(ACCOUNT.key)), fields);
    expect(history.listEvents).not.toHaveBeenCalled();
  });

  it('GET /v1/deliveries/:id asks for the key’s account’s delivery; one it does not find is 404', async () => {
    history.getDelivery.mockRejectedValue(
      new ProblemException({ status: 404, slug: 'delivery-not-found', title: 'Delivery not found', detail: 'No delivery with this id.' }),
    );
    expectProblem(await ctx.http().get(`/v1/deliveries/${DELIVERY}`).set(bearer(ACCOUNT.key)), 404, '/problems/delivery-not-found');
    expect(history.getDelivery).toHaveBeenCalledWith(ACCOUNT.id, DELIVERY);
  });

  it('PUT /v1/account/callback-url sets the account’s (200), null clears it', async () => {
    const set = await ctx
      .http()
      .put('/v1/account/callback-url')
      .set(bearer(ACCOUNT.key))
      .send({ callbackUrl: 'https://example.com/hooks' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ callbackUrl: 'https://example.com/hooks' });
    await ctx.http().put('/v1/account/callback-url').set(bearer(ACCOUNT.key)).send({ callbackUrl: null }).expect(200);
    expect(callbackUrls.set.mock.calls).toEqual([
      [ACCOUNT.id, 'https://example.com/hooks'],
      [ACCOUNT.id, null],
    ]);
  });

  it.each([
    ['left out', {}],
    ['a number', { callbackUrl: 42 }],
    ['over 2048 characters', { callbackUrl: `https://example.com/${'x'.repeat(2048)}` }],
  ])('PUT /v1/account/callback-url with one %s is 400 naming callbackUrl', async (_case, body) => {
    expectInvalidFields(await ctx.http().put('/v1/account/callback-url').set(bearer(ACCOUNT.key)).send(body), ['callbackUrl']);
    expect(callbackUrls.set).not.toHaveBeenCalled();
  });

  it('POST /v1/account/webhook-secret/reveal is 200 with the secret once, then 409', async () => {
    secrets.reveal.mockResolvedValueOnce(SECRET).mockResolvedValueOnce(null);
    const first = await ctx.http().post('/v1/account/webhook-secret/reveal').set(bearer(ACCOUNT.key));
    expect(first.status).toBe(200);
    expect(first.body).toEqual(SECRET);
    expectProblem(
      await ctx.http().post('/v1/account/webhook-secret/reveal').set(bearer(ACCOUNT.key)),
      409,
      '/problems/webhook-secret-already-shown',
    );
    expect(secrets.reveal).toHaveBeenCalledWith(ACCOUNT.id);
  });

  it('GET /v1/account/webhook-secret and POST …/rotate answer 200 for the key’s account', async () => {
    secrets.status.mockResolvedValue({ configured: true, revealed: true, createdAt: SECRET.createdAt, previousSecretExpiresAt: null });
    secrets.rotate.mockResolvedValue({ ...SECRET, previousSecretExpiresAt: '2026-07-16T12:00:00.000Z' });
    expect((await ctx.http().get('/v1/account/webhook-secret').set(bearer(ACCOUNT.key))).body).toMatchObject({ configured: true });
    const rotated = await ctx.http().post('/v1/account/webhook-secret/rotate').set(bearer(OTHER_ACCOUNT.key));
    expect(rotated.status).toBe(200);
    expect(rotated.body.previousSecretExpiresAt).toBe('2026-07-16T12:00:00.000Z');
    expect(secrets.rotate).toHaveBeenCalledWith(OTHER_ACCOUNT.id);
  });
});
