import { ConfigError, loadConfig, parseProviders } from './load-config';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      simPort: 4010,
      dataDir: '.data',
      databaseUrl: undefined,
      simulated: true,
      providerCallTimeoutMs: 5000,
    });
    expect(config.breaker).toEqual({
      consecutiveFailures: 5,
      windowMs: 120_000,
      windowErrorRate: 0.1,
      windowMinCalls: 10,
      healthIntervalMs: 30_000,
      halfOpenAfterPasses: 5,
      halfOpenProbeShare: 0.1,
      closeSuccessRate: 0.95,
      closeAfterMs: 300_000,
      closeMinProbes: 10,
      slowCallMs: 2000,
    });
    expect(config.providers).toEqual([
      { name: 'primary', adapter: 'sim', baseUrl: 'http://127.0.0.1:4010' },
      { name: 'failover', adapter: 'sim', baseUrl: 'http://127.0.0.1:4010' },
    ]);
    expect(config.apiKeys).toEqual([]);
    expect(config.adminToken).toBeUndefined();
  });

  it('lets webhooks go to private addresses only in the all-local mode, unless WEBHOOK_ALLOW_PRIVATE_TARGETS says otherwise', () => {
    const allow = (env: Record<string, string>) => loadConfig(env).notifications.allowPrivateTargets;
    expect(allow({})).toBe(true);
    expect(allow({ DATABASE_URL: 'postgres://u:p@db:5432/broker' })).toBe(false);
    expect(allow({ PROVIDERS: 'primary=sim:http://sim:4010' })).toBe(false);
    expect(allow({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' })).toBe(false);
    expect(allow({ DATABASE_URL: 'postgres://u:p@db:5432/broker', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' })).toBe(true);
    expect(allow({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '' })).toBe(true);
  });

  it('reads numbers, rates and lists', () => {
    const config = loadConfig({
      PORT: '8080',
      BREAKER_WINDOW_ERROR_RATE: '0.25',
      BROKER_API_KEY: 'key-aaaaaaaaaaaaaaaa,key-bbbbbbbbbbbbbbbb',
      SIM_PORT: '',
    });
    expect(config.port).toBe(8080);
    expect(config.simPort).toBe(4010);
    expect(config.breaker.windowErrorRate).toBe(0.25);
    expect(config.apiKeys).toEqual(['key-aaaaaaaaaaaaaaaa', 'key-bbbbbbbbbbbbbbbb']);
  });

  it.each([
    ['PORT', 'abc', /^invalid configuration: PORT must be an integer from 0 to 65535 \(got "abc"\)$/],
    ['PORT', '70000', /PORT must be an integer from 0 to 65535 \(got "70000"\)/],
    ['BREAKER_WINDOW_ERROR_RATE', '1.5', /BREAKER_WINDOW_ERROR_RATE must be a number from 0 to less than 1 \(got "1.5"\)/],
    ['BREAKER_CONSECUTIVE_FAILURES', '0', /BREAKER_CONSECUTIVE_FAILURES must be an integer from 1 to 1000/],
    ['BREAKER_WINDOW_MS', '12.5', /BREAKER_WINDOW_MS must be an integer from 120 to 86400000 that 120 divides/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL must be a postgres:\/\/ URL/],
    ['PROVIDERS', 'primary', /PROVIDERS entry "primary" must look like name=adapter:http/],
    ['PROVIDERS', 'a=twilio:http://x', /PROVIDERS entry "a" names adapter "twilio"/],
  ])('rejects %s=%s with one line naming it', (name, value, message) => {
    const load = () => loadConfig({ [name]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
    try {
      load();
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('never echoes a secret it rejects', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'short-secret' })).toThrow(
      /^invalid configuration: ADMIN_TOKEN must be at least 16 characters$/,
    );
  });

  it('lists every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', SIM_PORT: 'y' })).toThrow(/PORT.*; SIM_PORT/);
  });
});

describe('parseProviders', () => {
  it('keeps the routing order and trims trailing slashes', () => {
    expect(parseProviders('main=sim:http://sim:4010/, backup=sim:https://b.example')).toEqual([
      { name: 'main', adapter: 'sim', baseUrl: 'http://sim:4010' },
      { name: 'backup', adapter: 'sim', baseUrl: 'https://b.example' },
    ]);
  });

  it('refuses a name given twice', () => {
    expect(() => parseProviders('a=sim:http://x,a=sim:http://y')).toThrow('PROVIDERS names "a" twice');
  });
});

describe('database pool settings', () => {
  it('opens 20 connections and keeps them by default', () => {
    expect(loadConfig({})).toMatchObject({ databasePoolSize: 20, databasePoolIdleTimeoutMs: 0 });
  });

  it('takes DATABASE_POOL_SIZE from 1 to 500 and DATABASE_POOL_IDLE_TIMEOUT_MS from 0 to 86 400 000', () => {
    expect(loadConfig({ DATABASE_POOL_SIZE: '1', DATABASE_POOL_IDLE_TIMEOUT_MS: '0' })).toMatchObject({ databasePoolSize: 1 });
    expect(loadConfig({ DATABASE_POOL_SIZE: '500', DATABASE_POOL_IDLE_TIMEOUT_MS: '86400000' })).toMatchObject({
      databasePoolSize: 500,
      databasePoolIdleTimeoutMs: 86_400_000,
    });
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(/DATABASE_POOL_SIZE must be an integer from 1 to 500/);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '501' })).toThrow(/DATABASE_POOL_SIZE/);
    expect(() => loadConfig({ DATABASE_POOL_IDLE_TIMEOUT_MS: '-1' })).toThrow(/DATABASE_POOL_IDLE_TIMEOUT_MS/);
    expect(() => loadConfig({ DATABASE_POOL_IDLE_TIMEOUT_MS: '86400001' })).toThrow(/DATABASE_POOL_IDLE_TIMEOUT_MS/);
  });
});
