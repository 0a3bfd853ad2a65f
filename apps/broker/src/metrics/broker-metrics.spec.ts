/**
 * The broker's own series follow Prometheus' conventions and stay bounded: a counter ends in `_total`,
 * a time is in seconds, and every label is one whose values come from a fixed, small set (a provider, a
 * state, a route pattern...), never a participant number, a session or account id, or a URL. Each series
 * is documented in docs/operations.md. A new label fails here until it is added with what bounds it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricObject } from 'prom-client';
import { BrokerMetrics } from './broker-metrics';

/** Every label the broker's series may carry, with what bounds its values. */
const BOUNDED_LABELS: Record<string, string> = {
  provider: 'the configured providers (PROVIDERS)',
  operation: 'the provider port: bind, unbind, sms, call, health, ...',
  outcome: 'success, or a failure class of the adapters; a rescue: moved, failed or cancelled',
  counts_against_provider: 'true or false',
  from: 'a breaker state, or a configured provider (a rescue left it)',
  to: 'a breaker state, or a configured provider or none (where a rescue moved a session)',
  state: 'a breaker state, a pool number state, or a database pool client state',
  result: 'pass or fail',
  failed_over: 'true or false',
  limit: 'the abuse limits of docs/security.md',
  reason: 'a problem type, or a give-up reason',
  statement: 'a statement class: verb and first table, or a name in the SQL',
  step: 'reserve, bind, activate',
  route: 'a route pattern the app registers, or unmatched',
  method: 'the standard HTTP methods, or OTHER',
  status: 'an HTTP status code',
  channel: 'sms, voice, or voice+sms (a session with both)',
  decision: 'allow or block',
  kind: 'account or ops',
};

/** prom-client's process and Node.js series: documented by prom-client. */
const DEFAULT_SERIES = /^(process_|nodejs_)/;

describe('BrokerMetrics', () => {
  const metrics = new BrokerMetrics();
  // At run time these are the metric objects themselves, with the label names they were declared with.
  const own = (metrics.registry.getMetricsAsArray() as Array<MetricObject & { labelNames?: string[] }>).filter(
    (metric) => !DEFAULT_SERIES.test(metric.name),
  );

  it('labels every series only with labels whose values are a small, fixed set', () => {
    const unbounded = own.flatMap((metric) =>
      (metric.labelNames ?? []).filter((label) => !(label in BOUNDED_LABELS)).map((label) => `${metric.name}{${label}}`),
    );
    expect(unbounded).toEqual([]);
  });

  it('names counters *_total and times in seconds', () => {
    for (const metric of own) {
      const type = String(metric.type);
      if (type === 'counter') expect(metric.name).toMatch(/_total$/);
      else expect(metric.name).not.toMatch(/_total$/);
      if (type === 'histogram') expect(metric.name).toMatch(/_seconds$/);
      expect(metric.name).not.toMatch(/_(ms|milliseconds|minutes)(_|$)/);
    }
  });

  it('documents each series in docs/operations.md', () => {
    const docs = readFileSync(join(process.cwd(), 'docs/operations.md'), 'utf8');
    expect(own.map((metric) => metric.name).filter((name) => !docs.includes(`\`${name}\``))).toEqual([]);
  });
});
