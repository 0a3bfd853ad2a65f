/** /v1/admin/numbers as an operator meets it: the admin token, validation of what is added, 404s, statuses. */
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
import type { ProxyNumberDto } from './dto/proxy-number.dto';
import { NumbersAdminController } from './numbers-admin.controller';
import { ProxyNumbersService } from './proxy-numbers.service';

const ID = '3c9f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f';
const UNKNOWN = '0b7f1c2e-4b6a-4c1d-9e8f-0a1b2c3d4e5f';
const NUMBER: ProxyNumberDto = {
  id: ID,
  provider: 'primary',
  number: '+2349010000001',
  capabilities: ['sms', 'voice'],
  enabled: true,
  accountId: null,
  activeSessions: 0,
  createdAt: '2026-07-15T12:00:00.000Z',
};

describe('NumbersAdminController', () => {
  const numbers = {
    list: jest.fn<ProxyNumbersService['list']>(),
    add: jest.fn<ProxyNumbersService['add']>(),
    disable: jest.fn<ProxyNumbersService['disable']>(),
    dedicate: jest.fn<ProxyNumbersService['dedicate']>(),
  };
  const admin = bearer(ADMIN_TOKEN);
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([NumbersAdminController], { providers: [{ provide: ProxyNumbersService, useValue: numbers }] });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    for (const mock of Object.values(numbers)) mock.mockReset();
    numbers.list.mockResolvedValue([NUMBER]);
    numbers.add.mockResolvedValue(NUMBER);
    numbers.disable.mockImplementation((id) => Promise.resolve(id === ID ? { ...NUMBER, enabled: false } : undefined));
    numbers.dedicate.mockImplementation((id, accountId) => Promise.resolve(id === ID ? { ...NUMBER, accountId } : undefined));
  });

  it('is 401 without the admin token, and with an account’s API key', async () => {
    expectProblem(await ctx.http().get('/v1/admin/numbers'), 401);
    expectProblem(
      await ctx.http().post('/v1/admin/numbers').set(bearer(ACCOUNT.key)).send({ provider: 'primary', number: NUMBER.number }),
      401,
    );
    expect(Object.values(numbers).every((m) => m.mock.calls.length === 0)).toBe(true);
  });

  it('GET lists the pool, one provider’s when asked', async () => {
    const res = await ctx.http().get('/v1/admin/numbers?provider=primary').set(admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ numbers: [NUMBER] });
    expect(numbers.list).toHaveBeenCalledWith('primary');
  });

  it('POST adds a number (201); capabilities left out are left to the service (both)', async () => {
    const res = await ctx.http().post('/v1/admin/numbers').set(admin).send({ provider: 'primary', number: NUMBER.number });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(NUMBER);
    expect(numbers.add).toHaveBeenCalledWith('primary', NUMBER.number, undefined);
    await ctx
      .http()
      .post('/v1/admin/numbers')
      .set(admin)
      .send({ provider: 'primary', number: NUMBER.number, capabilities: ['voice'] })
      .expect(201);
    expect(numbers.add).toHaveBeenLastCalledWith('primary', NUMBER.number, ['voice']);
  });

  it.each([
    ['no provider', { number: NUMBER.number }, ['provider']],
    ['a number that is not E.164', { provider: 'primary', number: '09010000001' }, ['number']],
    ['an unknown capability', { provider: 'primary', number: NUMBER.number, capabilities: ['fax'] }, ['capabilities']],
    ['no capability at all', { provider: 'primary', number: NUMBER.number, capabilities: [] }, ['capabilities']],
    ['null capabilities', { provider: 'primary', number: NUMBER.number, capabilities: null }, ['capabilities']],
    ['one capability twice', { provider: 'primary', number: NUMBER.number, capabilities: ['sms', 'sms'] }, ['capabilities']],
  ])('POST with %s is 400 naming the field, and nothing is added', async (_case, body, fields) => {
    expectInvalidFields(await ctx.http().post('/v1/admin/numbers').set(admin).send(body), fields);
    expect(numbers.add).not.toHaveBeenCalled();
  });

  it('DELETE disables a number (200); 404 for one that is not there or an id that is none', async () => {
    const res = await ctx.http().delete(`/v1/admin/numbers/${ID}`).set(admin);
    expect(res.status).toBe(200);
    expect(res.body.enabled).toBe(false);
    expectProblem(await ctx.http().delete(`/v1/admin/numbers/${UNKNOWN}`).set(admin), 404, '/problems/not-found');
    expectProblem(await ctx.http().delete(`/v1/admin/numbers/${NUMBER.number}`).set(admin), 404, '/problems/not-found');
  });

  it('PUT …/account dedicates a number to an account, DELETE …/account shares it again', async () => {
    const dedicated = await ctx.http().put(`/v1/admin/numbers/${ID}/account`).set(admin).send({ accountId: ACCOUNT.id });
    expect(dedicated.status).toBe(200);
    expect(dedicated.body.accountId).toBe(ACCOUNT.id);
    const shared = await ctx.http().delete(`/v1/admin/numbers/${ID}/account`).set(admin);
    expect(shared.body.accountId).toBeNull();
    expect(numbers.dedicate.mock.calls).toEqual([
      [ID, ACCOUNT.id],
      [ID, null],
    ]);
    expectProblem(await ctx.http().put(`/v1/admin/numbers/${UNKNOWN}/account`).set(admin).send({ accountId: ACCOUNT.id }), 404);
    expectProblem(await ctx.http().delete(`/v1/admin/numbers/${UNKNOWN}/account`).set(admin), 404);
  });

  it('PUT …/account with an accountId that is no UUID is 400 naming it', async () => {
    expectInvalidFields(await ctx.http().put(`/v1/admin/numbers/${ID}/account`).set(admin).send({ accountId: 'rides' }), ['accountId']);
    expect(numbers.dedicate).not.toHaveBeenCalled();
  });
});
