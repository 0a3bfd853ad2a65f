/** GET/PUT/DELETE /v1/account/rescue as a client meets it: its own account's setting, afterSeconds and notice checked. */
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
import { MAX_RESCUE_AFTER_SECONDS } from './dto/rescue-settings.dto';
import { RescueController } from './rescue.controller';
import { RescueSettingsRepository, type RescueSetting } from './rescue-settings.repository';

const OFF: RescueSetting = { afterSeconds: null, notice: null };

describe('RescueController', () => {
  const stored = new Map<string, RescueSetting>();
  const settings = {
    get: jest.fn<RescueSettingsRepository['get']>((id) => Promise.resolve(stored.get(id) ?? OFF)),
    set: jest.fn<RescueSettingsRepository['set']>((id, setting) => (stored.set(id, setting), Promise.resolve(setting))),
  };
  let ctx: ControllerContext;
  const put = (body: unknown) =>
    ctx
      .http()
      .put('/v1/account/rescue')
      .set(bearer(ACCOUNT.key))
      .send(body as object);

  beforeAll(async () => {
    ctx = await controllerSetup([RescueController], { providers: [{ provide: RescueSettingsRepository, useValue: settings }] });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    stored.clear();
    settings.set.mockClear();
  });

  it('is 401 without a key or with an unknown one, and changes nothing', async () => {
    expectProblem(await ctx.http().get('/v1/account/rescue'), 401);
    expectProblem(await ctx.http().put('/v1/account/rescue').set(bearer('sk_test_nobody_0123456789abcdef')).send({ afterSeconds: 0 }), 401);
    expectProblem(await ctx.http().delete('/v1/account/rescue'), 401);
    expect(settings.set).not.toHaveBeenCalled();
  });

  it('is off until set (200)', async () => {
    const res = await ctx.http().get('/v1/account/rescue').set(bearer(ACCOUNT.key));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ enabled: false, afterSeconds: null, notice: null });
  });

  it('PUT turns it on for the key’s account only (200); a notice left out is none; DELETE turns it off', async () => {
    const on = await put({ afterSeconds: 300, notice: 'Our line changed.' });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ enabled: true, afterSeconds: 300, notice: 'Our line changed.' });
    expect((await ctx.http().get('/v1/account/rescue').set(bearer(OTHER_ACCOUNT.key))).body).toEqual({
      enabled: false,
      afterSeconds: null,
      notice: null,
    });
    expect((await put({ afterSeconds: 0 })).body).toEqual({ enabled: true, afterSeconds: 0, notice: null });
    const off = await ctx.http().delete('/v1/account/rescue').set(bearer(ACCOUNT.key));
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ enabled: false, afterSeconds: null, notice: null });
    expect(stored.get(ACCOUNT.id)).toEqual(OFF);
  });

  it('afterSeconds from 0 to seven days, whole: both sides of each end', async () => {
    expect((await put({ afterSeconds: MAX_RESCUE_AFTER_SECONDS })).status).toBe(200);
    expectInvalidFields(await put({ afterSeconds: MAX_RESCUE_AFTER_SECONDS + 1 }), ['afterSeconds']);
    expectInvalidFields(await put({ afterSeconds: -1 }), ['afterSeconds']);
    expectInvalidFields(await put({ afterSeconds: 1.5 }), ['afterSeconds']);
    expectInvalidFields(await put({}), ['afterSeconds']);
  });

  it('a notice that is blank or not a text is a 400 naming it, and nothing is stored', async () => {
    settings.set.mockClear();
    expectInvalidFields(await put({ afterSeconds: 60, notice: '   ' }), ['notice']);
    expectInvalidFields(await put({ afterSeconds: 60, notice: 42 }), ['notice']);
    expect(settings.set).not.toHaveBeenCalled();
  });
});
