import { ConfigError, loadConfig } from '../config';
import { LANE_LINGER_MS, workerSettings } from './notification-settings';

describe('webhook settings', () => {
  it('default to the documented values (docs/webhooks.md), strict outside the all-local mode', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/broker' }).notifications).toEqual({
      opsWebhookUrl: undefined,
      opsWebhookSecret: undefined,
      allowPrivateTargets: false,
      minPort: 1024,
      retryBaseMs: 5_000,
      retryMaxMs: 300_000,
      giveUpAfterMs: 72 * 3600_000,
      connectTimeoutMs: 5_000,
      attemptTimeoutMs: 15_000,
      downAfterFailures: 3,
      downRetryIntervalMs: 300_000,
      maxInFlightPerEndpoint: 8,
      breakerFailures: 5,
      breakerResetMs: 60_000,
      breakerMaxResetMs: 600_000,
      pollIntervalMs: 1_000,
      leaseMs: 30_000,
      secretOverlapMs: 24 * 3600_000,
    });
    expect(workerSettings(loadConfig({}).notifications).lingerMs).toBe(LANE_LINGER_MS);
  });

  it('reads shortened durations for tests and development', () => {
    const n = loadConfig({
      WEBHOOK_RETRY_BASE_MS: '20',
      WEBHOOK_RETRY_MAX_MS: '100',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    }).notifications;
    expect(n).toMatchObject({ retryBaseMs: 20, retryMaxMs: 100, allowPrivateTargets: true, pollIntervalMs: 50 });
    expect(workerSettings(n).lingerMs).toBe(50);
  });

  it.each([
    [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }, /WEBHOOK_ALLOW_PRIVATE_TARGETS must be true or false/],
    [{ WEBHOOK_RETRY_BASE_MS: '0' }, /WEBHOOK_RETRY_BASE_MS must be an integer from 1/],
    [{ WEBHOOK_RETRY_BASE_MS: '5000', WEBHOOK_RETRY_MAX_MS: '1000' }, /WEBHOOK_RETRY_MAX_MS must be at least WEBHOOK_RETRY_BASE_MS/],
    [{ WEBHOOK_LEASE_MS: '15000' }, /WEBHOOK_LEASE_MS must be greater than WEBHOOK_ATTEMPT_TIMEOUT_MS/],
    [{ WEBHOOK_BREAKER_RESET_MS: '700000' }, /WEBHOOK_BREAKER_MAX_RESET_MS must be at least WEBHOOK_BREAKER_RESET_MS/],
    [{ OPS_WEBHOOK_URL: 'ops.example.com' }, /OPS_WEBHOOK_URL must be an http\(s\) URL/],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never echoes OPS_WEBHOOK_SECRET', () => {
    expect(() => loadConfig({ OPS_WEBHOOK_SECRET: 'short' })).toThrow(
      /^invalid configuration: OPS_WEBHOOK_SECRET must be at least 16 characters$/,
    );
  });
});
