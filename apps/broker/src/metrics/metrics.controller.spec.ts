/** GET /metrics as Prometheus meets it: the text format, the registry's series; METRICS_TOKEN is checked in front of it (broker-app.ts). */
import { controllerSetup, type ControllerContext } from '../../../../test/support/controller-context';
import { BrokerMetrics } from './broker-metrics';
import { MetricsController } from './metrics.controller';

describe('MetricsController', () => {
  let ctx: ControllerContext;
  let metrics: BrokerMetrics;

  beforeAll(async () => {
    metrics = new BrokerMetrics();
    ctx = await controllerSetup([MetricsController], { providers: [{ provide: BrokerMetrics, useValue: metrics }] });
  });
  afterAll(() => ctx.close());

  it('is 200 in Prometheus’ text format (0.0.4), with the breaker gauge as it stands', async () => {
    metrics.breakerState.set({ provider: 'primary' }, 2);
    const res = await ctx.http().get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toContain('# TYPE cpaas_breaker_state gauge');
    expect(res.text).toMatch(/^cpaas_breaker_state\{provider="primary"\} 2$/m);
  });
});
