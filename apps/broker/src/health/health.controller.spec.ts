/**
 * /health and /health/ready as a load balancer meets them: liveness always 200; readiness 200 while the
 * database answers and some provider can take sessions, else a 503 problem naming what is down, with
 * Retry-After. The readiness checks are Terminus' own, the providers' indicator is the real one over
 * scripted breakers; the database's check (a writable server answering in time) is scripted.
 */
import { jest } from '@jest/globals';
import { HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { VirtualTimeScheduler } from 'rxjs';
import { CircuitBreaker, telephonyPolicy } from '@app/circuit-breaker';
import { controllerSetup, expectProblem, type ControllerContext } from '../../../../test/support/controller-context';
import { BreakerLeadership } from '../providers/cluster/breaker-leadership';
import { ProviderBreakers } from '../providers/provider-breakers';
import { DatabaseHealthIndicator } from './database.health';
import { HealthController } from './health.controller';
import { ProvidersHealthIndicator } from './providers.health';

describe('HealthController', () => {
  const status = new CircuitBreaker(telephonyPolicy(), { scheduler: new VirtualTimeScheduler() }).status();
  const disabled = new Set<string>();
  const breakers = {
    healthAll: () => ['primary', 'failover'].map((name) => ({ name, disabled: disabled.has(name), disabledReason: null, status })),
  };
  let databaseUp = true;
  let indicators: HealthIndicatorService;
  const database = {
    check: jest.fn((key: string, timeoutMs: number) => {
      const indicator = indicators.check(key);
      return Promise.resolve(databaseUp ? indicator.up() : indicator.down({ message: `no answer within ${timeoutMs} ms` }));
    }),
  };
  let ctx: ControllerContext;

  beforeAll(async () => {
    ctx = await controllerSetup([HealthController], {
      imports: [TerminusModule.forRoot({ logger: false })],
      providers: [
        ProvidersHealthIndicator,
        { provide: DatabaseHealthIndicator, useValue: database },
        { provide: ProviderBreakers, useValue: breakers },
        { provide: BreakerLeadership, useValue: { current: { scope: 'cluster', leader: null, fence: null } } },
      ],
    });
    indicators = new HealthIndicatorService();
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    databaseUp = true;
    disabled.clear();
  });

  it('GET /health is 200 without any credential', async () => {
    const res = await ctx.http().get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /health/ready is 200 with each check’s details while the database answers and a provider is usable', async () => {
    const res = await ctx.http().get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      details: { database: { status: 'up' }, providers: { status: 'up', providers: { primary: { state: 'CLOSED', disabled: false } } } },
    });
    // A ping that hangs must not hold the probe: it is bounded.
    expect(database.check).toHaveBeenCalledWith('database', 1500);
  });

  it('a database that does not answer makes it a 503 problem naming the database, with Retry-After', async () => {
    databaseUp = false;
    const res = await ctx.http().get('/health/ready');
    expectProblem(res, 503, '/problems/not-ready');
    expect(res.body.detail).toBe('Not ready: database down.');
    expect(res.body.checks).toMatchObject({ database: { status: 'down' }, providers: { status: 'up' } });
    expect(res.headers['retry-after']).toBe('5');
  });

  it('every provider disabled by hand makes it 503; one left is enough', async () => {
    disabled.add('primary');
    expect((await ctx.http().get('/health/ready')).status).toBe(200);
    disabled.add('failover');
    const res = await ctx.http().get('/health/ready');
    expectProblem(res, 503, '/problems/not-ready');
    expect(res.body.detail).toBe('Not ready: providers down.');
  });
});
