/** GET/PUT /v1/account/default-country as a client meets it: its own account's setting, the country validated. */
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
import { DestinationCache } from '../destinations/destination-cache';
import { AccountSettingsController } from './account-settings.controller';
import type { AccountsService } from './accounts.service';

describe('AccountSettingsController', () => {
  const countries = new Map<string, string | null>([[ACCOUNT.id, 'NG']]);
  const accounts = {
    defaultCountry: jest.fn<AccountsService['defaultCountry']>((id) => Promise.resolve(countries.get(id) ?? null)),
    setDefaultCountry: jest.fn<AccountsService['setDefaultCountry']>(
      (id, country) => (countries.set(id, country), Promise.resolve(country)),
    ),
  };
  const destinations = { reread: jest.fn<DestinationCache['reread']>().mockResolvedValue(null) };
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([AccountSettingsController], {
      accounts,
      providers: [{ provide: DestinationCache, useValue: destinations }],
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    accounts.setDefaultCountry.mockClear();
    destinations.reread.mockClear();
  });

  it('without a key is 401, for reading and for setting', async () => {
    expectProblem(await ctx.http().get('/v1/account/default-country'), 401);
    expectProblem(await ctx.http().put('/v1/account/default-country').send({ country: 'GH' }), 401);
    expect(accounts.setDefaultCountry).not.toHaveBeenCalled();
  });

  it('each account reads its own', async () => {
    expect((await ctx.http().get('/v1/account/default-country').set(bearer(ACCOUNT.key))).body).toEqual({ country: 'NG' });
    expect((await ctx.http().get('/v1/account/default-country').set(bearer(OTHER_ACCOUNT.key))).body).toEqual({ country: null });
  });

  it('PUT sets the key’s account’s country (200), and this replica reads participants with it at once', async () => {
    const res = await ctx.http().put('/v1/account/default-country').set(bearer(OTHER_ACCOUNT.key)).send({ country: 'GH' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ country: 'GH' });
    expect(accounts.setDefaultCountry).toHaveBeenCalledWith(OTHER_ACCOUNT.id, 'GH');
    expect(destinations.reread).toHaveBeenCalledWith(OTHER_ACCOUNT.id);
  });

  it('null clears it', async () => {
    const res = await ctx.http().put('/v1/account/default-country').set(bearer(OTHER_ACCOUNT.key)).send({ country: null });
    expect(res.body).toEqual({ country: null });
  });

  it.each([
    ['lower case', { country: 'ng' }],
    ['a code no numbering plan has', { country: 'XX' }],
    ['a country name', { country: 'Nigeria' }],
    ['left out (null clears it; nothing is not null)', {}],
  ])('%s is 400 naming country, and nothing changes', async (_case, body) => {
    expectInvalidFields(await ctx.http().put('/v1/account/default-country').set(bearer(ACCOUNT.key)).send(body), ['country']);
    expect(accounts.setDefaultCountry).not.toHaveBeenCalled();
  });
});
