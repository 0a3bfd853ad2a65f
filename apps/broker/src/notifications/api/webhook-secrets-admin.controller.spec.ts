/** POST /v1/admin/accounts/:id/webhook-secret/reveal as an operator meets it: the token, 404, once only. */
import { jest } from '@jest/globals';
import {
  ACCOUNT,
  ADMIN_TOKEN,
  bearer,
  controllerSetup,
  expectProblem,
  type ControllerContext,
} from '../../../../../test/support/controller-context';
import { WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import { WebhookSecretsAdminController } from './webhook-secrets-admin.controller';

const SECRET = { secret: 'whsec_abc', createdAt: '2026-07-15T12:00:00.000Z', previousSecretExpiresAt: null };

describe('WebhookSecretsAdminController', () => {
  const secrets = {
    accountExists: jest.fn<WebhookSecrets['accountExists']>((id) => Promise.resolve(id === ACCOUNT.id)),
    reveal: jest.fn<WebhookSecrets['reveal']>(),
  };
  let ctx: ControllerContext;
  const path = (id: string) => `/v1/admin/accounts/${id}/webhook-secret/reveal`;

  beforeAll(async () => {
    ctx = await controllerSetup([WebhookSecretsAdminController], { providers: [{ provide: WebhookSecrets, useValue: secrets }] });
  });
  afterAll(() => ctx.close());
  beforeEach(() => secrets.reveal.mockReset());

  it('is 401 without the admin token, and with an account’s API key', async () => {
    expectProblem(await ctx.http().post(path(ACCOUNT.id)), 401);
    expectProblem(await ctx.http().post(path(ACCOUNT.id)).set(bearer(ACCOUNT.key)), 401);
    expect(secrets.reveal).not.toHaveBeenCalled();
  });

  it('is 200 with the secret once, then 409', async () => {
    secrets.reveal.mockResolvedValueOnce(SECRET).mockResolvedValueOnce(null);
    const first = await ctx.http().post(path(ACCOUNT.id)).set(bearer(ADMIN_TOKEN));
    expect(first.status).toBe(200);
    expect(first.body).toEqual(SECRET);
    expectProblem(await ctx.http().post(path(ACCOUNT.id)).set(bearer(ADMIN_TOKEN)), 409, '/problems/webhook-secret-already-shown');
  });

  it('is 404 for an account that is not there or an id that is none, and reveals nothing', async () => {
    expectProblem(await ctx.http().post(path('0b7f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f')).set(bearer(ADMIN_TOKEN)), 404, '/problems/not-found');
    expectProblem(await ctx.http().post(path('rides')).set(bearer(ADMIN_TOKEN)), 404, '/problems/not-found');
    expect(secrets.reveal).not.toHaveBeenCalled();
  });
});
