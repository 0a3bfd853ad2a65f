/**
 * /v1/admin/providers as an operator meets it: the admin token, 404 for a provider the broker does not have,
 * a disable that is persisted before it is applied, the number import's answer. Breakers, the store and the
 * import are scripted.
 */
import { jest } from '@jest/globals';
import { VirtualTimeScheduler } from 'rxjs';
import { CircuitBreaker, telephonyPolicy } from '@app/circuit-breaker';
import {
  ACCOUNT,
  ADMIN_TOKEN,
  bearer,
  controllerSetup,
  expectInvalidFields,
  expectProblem,
  type ControllerContext,
} from '../../../../test/support/controller-context';
import { BreakerStateStore } from './breaker-state.store';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { BreakerOverrides } from './cluster/breaker-overrides';
import { NumberImport, type NumberImportResult } from './number-import';
import { PoolUsage } from './pool-usage';
import { ProviderBreakers, type ProviderHealth } from './provider-breakers';
import { ProvidersAdminController } from './providers-admin.controller';

const IMPORTED: NumberImportResult = {
  provider: 'primary',
  added: ['+15005550001'],
  alreadyThere: [],
  updated: [],
  failed: [],
  changed: true,
};

describe('ProvidersAdminController', () => {
  const breaker = new CircuitBreaker(telephonyPolicy(), { scheduler: new VirtualTimeScheduler() });
  const disabled = new Map<string, string | null>();
  /** What happened, in order: the store's write must come before the breaker's change. */
  const steps: string[] = [];
  const healthOf = (name: string): ProviderHealth => ({
    name,
    disabled: disabled.has(name),
    disabledReason: disabled.get(name) ?? null,
    status: breaker.status(),
  });
  const breakers = {
    has: (name: string) => name === 'primary',
    healthAll: () => [healthOf('primary')],
    health: healthOf,
    setDisabled: (name: string, off: boolean, reason: string | null) => {
      steps.push(`breaker ${off ? 'disabled' : 'enabled'}`);
      if (off) disabled.set(name, reason);
      else disabled.delete(name);
      return true;
    },
  };
  const store = {
    saveDisabled: jest.fn<BreakerStateStore['saveDisabled']>(async (_name, off) => {
      steps.push(`saved ${off ? 'disabled' : 'enabled'}`);
    }),
  };
  const numberImport = { run: jest.fn<NumberImport['run']>() };
  /** The leader's side of a force, scripted: the breaker shows it as forced, by whom. */
  const overrides = {
    force: jest.fn<BreakerOverrides['force']>(async (name, state, reason, by) => {
      steps.push(`forced ${state} by ${by}: ${reason}`);
      return { ...healthOf(name), status: { ...breaker.status(), state, forcedBy: by } };
    }),
  };
  const empty = { total: 0, enabled: 0, inUse: 0, voice: 0, sms: 0 };
  const admin = bearer(ADMIN_TOKEN);
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([ProvidersAdminController], {
      providers: [
        { provide: ProviderBreakers, useValue: breakers },
        { provide: BreakerStateStore, useValue: store },
        { provide: BreakerLeadership, useValue: { replica: 'replica-a', current: { scope: 'cluster', leader: 'replica-a', fence: null } } },
        { provide: PoolUsage, useValue: { of: () => ({ activeSessions: 0, activeSessionsByChannels: {}, pool: empty }) } },
        { provide: NumberImport, useValue: numberImport },
        { provide: BreakerOverrides, useValue: overrides },
      ],
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    steps.length = 0;
    disabled.clear();
    store.saveDisabled.mockClear();
    numberImport.run.mockReset().mockResolvedValue(IMPORTED);
    overrides.force.mockClear();
  });

  it('every route is 401 without the admin token, and with an account’s API key', async () => {
    for (const headers of [{}, bearer(ACCOUNT.key)])
      for (const [method, path] of [
        ['get', '/v1/admin/providers'],
        ['post', '/v1/admin/providers/primary/disable'],
        ['post', '/v1/admin/providers/primary/enable'],
        ['post', '/v1/admin/providers/primary/numbers/import'],
        ['post', '/v1/admin/providers/primary/breaker'],
      ] as const)
        expectProblem(await ctx.http()[method](path).set(headers), 401);
    expect(steps).toEqual([]);
    expect(numberImport.run).not.toHaveBeenCalled();
  });

  it('GET lists the providers with their breaker and the replica that answered', async () => {
    const res = await ctx.http().get('/v1/admin/providers').set(admin);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ providers: [{ name: 'primary', state: 'CLOSED', disabled: false }], replica: 'replica-a' });
  });

  it('disable is 200 with the provider disabled and its reason, written to the store before it is applied', async () => {
    const res = await ctx.http().post('/v1/admin/providers/primary/disable').set(admin).send({ reason: 'carrier maintenance' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'primary', disabled: true, disabledReason: 'carrier maintenance' });
    expect(store.saveDisabled).toHaveBeenCalledWith('primary', true, 'carrier maintenance');
    expect(steps).toEqual(['saved disabled', 'breaker disabled']);
  });

  it('disable takes no body at all too; enable puts it back (200)', async () => {
    await ctx.http().post('/v1/admin/providers/primary/disable').set(admin).expect(200);
    const res = await ctx.http().post('/v1/admin/providers/primary/enable').set(admin);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ disabled: false, disabledReason: null });
    expect(steps).toEqual(['saved disabled', 'breaker disabled', 'saved enabled', 'breaker enabled']);
  });

  it.each([
    ['a reason that is not text', { reason: 42 }, ['reason']],
    ['a reason over 500 characters', { reason: 'x'.repeat(501) }, ['reason']],
    ['a field the API does not have', { until: '2026-07-16' }, ['until']],
  ])('disable with %s is 400 naming the field, and nothing changes', async (_case, body, fields) => {
    expectInvalidFields(await ctx.http().post('/v1/admin/providers/primary/disable').set(admin).send(body), fields);
    expect(steps).toEqual([]);
  });

  it('a provider the broker does not have is 404 on disable and enable, and nothing is written', async () => {
    for (const action of ['disable', 'enable'])
      expectProblem(await ctx.http().post(`/v1/admin/providers/elsewhere/${action}`).set(admin), 404, '/problems/unknown-provider');
    expect(steps).toEqual([]);
  });

  it('breaker is 200 with the state the leader applied, its reason trimmed and "admin" as who', async () => {
    const res = await ctx.http().post('/v1/admin/providers/primary/breaker').set(admin).send({ state: 'OPEN', reason: '  SS7 outage  ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'primary', state: 'OPEN' });
    expect(overrides.force).toHaveBeenCalledWith('primary', 'OPEN', 'SS7 outage', 'admin');
  });

  it.each([
    ['HALF_OPEN', { state: 'HALF_OPEN', reason: 'x' }, ['state']],
    ['no reason', { state: 'CLOSED' }, ['reason']],
    ['a blank reason', { state: 'CLOSED', reason: '   ' }, ['reason']],
    ['a reason over 500 characters', { state: 'OPEN', reason: 'x'.repeat(501) }, ['reason']],
    ['who it was from the client', { state: 'OPEN', reason: 'x', by: 'someone' }, ['by']],
  ])('breaker with %s is 400 naming the field, and nothing is forced', async (_case, body, fields) => {
    expectInvalidFields(await ctx.http().post('/v1/admin/providers/primary/breaker').set(admin).send(body), fields);
    expect(overrides.force).not.toHaveBeenCalled();
  });

  it('breaker on a provider the broker does not have is 404, and nothing is forced', async () => {
    expectProblem(
      await ctx.http().post('/v1/admin/providers/elsewhere/breaker').set(admin).send({ state: 'OPEN', reason: 'x' }),
      404,
      '/problems/unknown-provider',
    );
    expect(overrides.force).not.toHaveBeenCalled();
  });

  it('numbers/import is 200 with what the import did', async () => {
    const res = await ctx.http().post('/v1/admin/providers/primary/numbers/import').set(admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(IMPORTED);
    expect(numberImport.run).toHaveBeenCalledWith('primary');
  });
});
