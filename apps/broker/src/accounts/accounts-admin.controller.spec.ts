/** /v1/admin/accounts and /v1/admin/api-keys as an operator meets them: the admin token, validation, 404s, statuses. */
import { jest } from '@jest/globals';
import {
  ACCOUNT,
  ADMIN_TOKEN,
  bearer,
  controllerSetup,
  expectInvalidFields,
  expectProblem,
  type ControllerContext,
} from '../../../../test/support/controller-context';
import { DestinationCache } from '../destinations/destination-cache';
import type { Account } from './account.entity';
import { AccountsAdminController } from './accounts-admin.controller';
import type { AccountsService } from './accounts.service';
import type { ApiKey } from './api-key.entity';

const CREATED = new Date('2026-07-15T12:00:00.000Z');
const account = (over: Partial<Account> = {}): Account =>
  ({
    id: ACCOUNT.id,
    name: 'rides',
    defaultCallbackUrl: null,
    interceptUrl: null,
    allowedCountries: null,
    allowSpecialRate: false,
    defaultCountry: null,
    createdAt: CREATED,
    ...over,
  }) as Account;
const KEY = {
  id: '00000000-0000-4000-8000-0000000000a1',
  accountId: ACCOUNT.id,
  keyHash: 'f'.repeat(64),
  keyPrefix: 'sk_live_abcd',
  label: 'backend',
  createdAt: CREATED,
  revokedAt: null,
} as ApiKey;
const KEY_DTO = {
  id: KEY.id,
  accountId: ACCOUNT.id,
  prefix: 'sk_live_abcd',
  label: 'backend',
  createdAt: CREATED.toISOString(),
  revokedAt: null,
};
const UNKNOWN = '0b7f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f';

describe('AccountsAdminController', () => {
  const accounts = {
    list: jest.fn<AccountsService['list']>(),
    createAccount: jest.fn<AccountsService['createAccount']>(),
    createKey: jest.fn<AccountsService['createKey']>(),
    setDestinations: jest.fn<AccountsService['setDestinations']>(),
    revokeKey: jest.fn<AccountsService['revokeKey']>(),
  };
  const destinations = { reread: jest.fn<DestinationCache['reread']>() };
  let ctx: ControllerContext;
  const admin = bearer(ADMIN_TOKEN);

  beforeAll(async () => {
    ctx = await controllerSetup([AccountsAdminController], {
      accounts,
      providers: [{ provide: DestinationCache, useValue: destinations }],
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    for (const mock of [...Object.values(accounts), destinations.reread]) mock.mockReset();
    accounts.list.mockResolvedValue([{ account: account(), keys: [KEY] }]);
    accounts.createKey.mockImplementation((id) => Promise.resolve(id === ACCOUNT.id ? { key: 'sk_live_secret', apiKey: KEY } : null));
    accounts.revokeKey.mockImplementation((id) => Promise.resolve(id === KEY.id ? ({ ...KEY, revokedAt: CREATED } as ApiKey) : null));
    accounts.setDestinations.mockImplementation((id, allowedCountries, allowSpecialRate) =>
      Promise.resolve(
        id === ACCOUNT.id
          ? { account: account({ allowedCountries: allowedCountries ?? null, allowSpecialRate: !!allowSpecialRate }), keys: [KEY] }
          : null,
      ),
    );
  });

  it.each([
    ['no token', {}],
    ['an API key instead of the token', bearer(ACCOUNT.key)],
    ['a wrong token', bearer(`${ADMIN_TOKEN}x`)],
  ])('%s is 401 on every route', async (_case, headers) => {
    for (const [method, path] of [
      ['get', '/v1/admin/accounts'],
      ['post', '/v1/admin/accounts'],
      ['post', `/v1/admin/accounts/${ACCOUNT.id}/api-keys`],
      ['put', `/v1/admin/accounts/${ACCOUNT.id}/destinations`],
      ['delete', `/v1/admin/api-keys/${KEY.id}`],
    ] as const)
      expectProblem(await ctx.http()[method](path).set(headers).send({ name: 'x' }), 401, '/problems/unauthorized');
    expect(Object.values(accounts).every((m) => m.mock.calls.length === 0)).toBe(true);
  });

  it('GET /v1/admin/accounts lists accounts with their keys’ prefixes, never a hash', async () => {
    const res = await ctx.http().get('/v1/admin/accounts').set(admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      accounts: [
        {
          id: ACCOUNT.id,
          name: 'rides',
          createdAt: CREATED.toISOString(),
          apiKeys: [KEY_DTO],
          allowedCountries: null,
          allowSpecialRate: false,
        },
      ],
    });
    expect(JSON.stringify(res.body)).not.toContain(KEY.keyHash);
  });

  it('POST /v1/admin/accounts is 201 with the key and the webhook secret, shown this once', async () => {
    const webhookSecret = { secret: 'whsec_abc', createdAt: CREATED.toISOString() };
    accounts.createAccount.mockResolvedValue({ account: account(), key: 'sk_live_secret', apiKey: KEY, webhookSecret });
    const res = await ctx.http().post('/v1/admin/accounts').set(admin).send({ name: 'rides', label: 'backend' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      account: { id: ACCOUNT.id, apiKeys: [KEY_DTO] },
      apiKey: { ...KEY_DTO, key: 'sk_live_secret' },
      webhookSecret,
    });
    expect(accounts.createAccount).toHaveBeenCalledWith('rides', 'backend');
  });

  it.each([
    ['no name', {}, ['name']],
    ['an empty name', { name: '' }, ['name']],
    ['a name over 200 characters', { name: 'x'.repeat(201) }, ['name']],
    ['a label that is not text', { name: 'rides', label: 7 }, ['label']],
  ])('POST /v1/admin/accounts with %s is 400 naming the field', async (_case, body, fields) => {
    expectInvalidFields(await ctx.http().post('/v1/admin/accounts').set(admin).send(body), fields);
    expect(accounts.createAccount).not.toHaveBeenCalled();
  });

  it('POST /v1/admin/accounts/:id/api-keys is 201 with the key; 404 for an account that is not there, or an id that is none', async () => {
    const res = await ctx.http().post(`/v1/admin/accounts/${ACCOUNT.id}/api-keys`).set(admin).send({ label: 'backend' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ ...KEY_DTO, key: 'sk_live_secret' });
    expectProblem(await ctx.http().post(`/v1/admin/accounts/${UNKNOWN}/api-keys`).set(admin).send({}), 404, '/problems/not-found');
    accounts.createKey.mockClear();
    expectProblem(await ctx.http().post('/v1/admin/accounts/rides/api-keys').set(admin).send({}), 404, '/problems/not-found');
    expect(accounts.createKey).not.toHaveBeenCalled();
  });

  it('PUT /v1/admin/accounts/:id/destinations is 200 with the account, and this replica enforces it before answering', async () => {
    const res = await ctx
      .http()
      .put(`/v1/admin/accounts/${ACCOUNT.id}/destinations`)
      .set(admin)
      .send({ allowedCountries: ['NG', 'GH'], allowSpecialRate: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ allowedCountries: ['NG', 'GH'], allowSpecialRate: true });
    expect(accounts.setDestinations).toHaveBeenCalledWith(ACCOUNT.id, ['NG', 'GH'], true);
    expect(destinations.reread).toHaveBeenCalledWith(ACCOUNT.id);
    expectProblem(
      await ctx
        .http()
        .put(`/v1/admin/accounts/${UNKNOWN}/destinations`)
        .set(admin)
        .send({ allowedCountries: ['NG'] }),
      404,
    );
  });

  it.each([
    ['a country that is no ISO code', { allowedCountries: ['Nigeria'] }, ['allowedCountries']],
    ['countries that are not a list', { allowedCountries: 'NG' }, ['allowedCountries']],
    ['allowSpecialRate that is not a boolean', { allowSpecialRate: 'yes' }, ['allowSpecialRate']],
  ])('PUT …/destinations with %s is 400 naming the field', async (_case, body, fields) => {
    expectInvalidFields(await ctx.http().put(`/v1/admin/accounts/${ACCOUNT.id}/destinations`).set(admin).send(body), fields);
    expect(accounts.setDestinations).not.toHaveBeenCalled();
  });

  it('DELETE /v1/admin/api-keys/:id is 200 with the key as revoked; 404 for a key that is not there', async () => {
    const res = await ctx.http().delete(`/v1/admin/api-keys/${KEY.id}`).set(admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...KEY_DTO, revokedAt: CREATED.toISOString() });
    expectProblem(await ctx.http().delete(`/v1/admin/api-keys/${UNKNOWN}`).set(admin), 404, '/problems/not-found');
    expectProblem(await ctx.http().delete('/v1/admin/api-keys/sk_live_abcd').set(admin), 404, '/problems/not-found');
  });
});

describe('AccountsAdminController while ADMIN_TOKEN is unset', () => {
  let ctx: ControllerContext;
  beforeAll(async () => {
    ctx = await controllerSetup([AccountsAdminController], {
      env: { ADMIN_TOKEN: undefined },
      providers: [{ provide: DestinationCache, useValue: {} }],
    });
  });
  afterAll(() => ctx.close());

  it('every request is 403 admin-disabled, whatever it carries', async () => {
    expectProblem(await ctx.http().get('/v1/admin/accounts'), 403, '/problems/admin-disabled');
    expectProblem(await ctx.http().get('/v1/admin/accounts').set(bearer(ADMIN_TOKEN)), 403, '/problems/admin-disabled');
  });
});
