/**
 * GET /v1/health/cpaas and its history as ops meet them: the spec's shape from memory (no key needed), the
 * history's parameters checked, 404 for a provider the broker does not have. Breakers, pool figures and the
 * transition store are scripted.
 */
import { jest } from '@jest/globals';
import { VirtualTimeScheduler } from 'rxjs';
import { CircuitBreaker, telephonyPolicy } from '@app/circuit-breaker';
import {
  T0,
  controllerSetup,
  expectInvalidFields,
  expectProblem,
  type ControllerContext,
} from '../../../../test/support/controller-context';
import { StreamSlots } from '../common/http';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { CpaasHealthController } from './cpaas-health.controller';
import { PoolUsage } from './pool-usage';
import { ProviderBreakers, type ProviderHealth } from './provider-breakers';
import { ProviderStateRepository } from './provider-state.repository';
import type { BreakerTransitionRecord } from './breaker-transition.entity';

const health = (name: string, breaker: CircuitBreaker): ProviderHealth => ({
  name,
  disabled: false,
  disabledReason: null,
  status: breaker.status(),
});

describe('CpaasHealthController', () => {
  const scheduler = new VirtualTimeScheduler();
  const primary = new CircuitBreaker(telephonyPolicy(), { scheduler });
  const failover = new CircuitBreaker(telephonyPolicy(), { scheduler });
  const breakers = {
    names: () => ['primary', 'failover'],
    has: (name: string) => name === 'primary' || name === 'failover',
    healthAll: () => [health('primary', primary), health('failover', failover)],
  };
  const pool = {
    of: () => ({ activeSessions: 3, activeSessionsByChannels: { sms: 3 }, pool: { total: 10, enabled: 10, inUse: 3, voice: 10, sms: 10 } }),
  };
  const leadership = { replica: 'replica-a', current: { scope: 'cluster' as const, leader: 'replica-a', fence: null } };
  const repository = { history: jest.fn<ProviderStateRepository['history']>() };
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([CpaasHealthController], {
      providers: [
        { provide: ProviderBreakers, useValue: breakers },
        { provide: PoolUsage, useValue: pool },
        { provide: BreakerLeadership, useValue: leadership },
        { provide: ProviderStateRepository, useValue: repository },
        { provide: StreamSlots, useValue: {} },
      ],
    });
  });
  afterAll(() => ctx.close());
  beforeEach(() => repository.history.mockReset().mockResolvedValue([]));

  it('GET /v1/health/cpaas is 200 without any key, in the shape the spec gives, every provider in routing order', async () => {
    for (let i = 0; i < 5; i++) primary.record({ kind: 'failure', reason: 'primary: HTTP 503 on bind' });
    ctx.clock.advance(1_000);
    const res = await ctx.http().get('/v1/health/cpaas');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      providers: [
        {
          name: 'primary',
          state: 'OPEN',
          openedAt: expect.any(String),
          lastError: 'primary: HTTP 503 on bind',
          activeSessions: 3,
          scope: 'cluster',
        },
        { name: 'failover', state: 'CLOSED', openedAt: null, lastError: null },
      ],
      replica: 'replica-a',
      leader: 'replica-a',
      startedAt: new Date(T0).toISOString(),
      timestamp: new Date(T0 + 1_000).toISOString(),
    });
    expect(repository.history).not.toHaveBeenCalled();
  });

  it('GET …/history is newest first, a page at a time, with the next page’s cursor', async () => {
    const row = (id: string): BreakerTransitionRecord =>
      ({
        id,
        provider: 'primary',
        from: 'CLOSED',
        to: 'OPEN',
        reason: '5 consecutive failures',
        lastError: 'x',
        at: new Date(T0),
      }) as BreakerTransitionRecord;
    repository.history.mockResolvedValue([row('9'), row('8'), row('7')]);
    const res = await ctx.http().get('/v1/health/cpaas/history?provider=primary&limit=2');
    expect(res.status).toBe(200);
    expect(res.body.transitions.map((t: { id: string }) => t.id)).toEqual(['9', '8']);
    expect(res.body.nextCursor).toBe('8');
    // One more than the page is asked for: that is how the last page knows it is the last.
    expect(repository.history).toHaveBeenCalledWith('primary', 3, undefined);
  });

  it('GET …/history for a provider the broker does not have is 404', async () => {
    expectProblem(await ctx.http().get('/v1/health/cpaas/history?provider=elsewhere'), 404, '/problems/unknown-provider');
    expect(repository.history).not.toHaveBeenCalled();
  });

  it.each([
    ['limit=0', ['limit']],
    ['limit=501', ['limit']],
    ['cursor=abc', ['cursor']],
    ['provider=' + 'x'.repeat(33), ['provider']],
  ])('GET …/history?%s is 400 naming the parameter', async (query, fields) => {
    expectInvalidFields(await ctx.http().get(`/v1/health/cpaas/history?${query}`), fields);
    expect(repository.history).not.toHaveBeenCalled();
  });
});
