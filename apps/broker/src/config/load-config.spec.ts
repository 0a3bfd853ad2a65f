import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
      closedCheckIntervalMs: 30_000,
      closeAfterMs: 300_000,
      closeMinProbes: 10,
      slowCallMs: 2000,
      // The lease defaults to one health interval, so a dead leader is replaced within two.
      leaderLeaseMs: 30_000,
      outcomeBatchMs: 20,
    });
    expect(config.providers).toEqual([
      { name: 'primary', adapter: 'sim', baseUrl: 'http://127.0.0.1:4010', credentials: {} },
      { name: 'failover', adapter: 'sim', baseUrl: 'http://127.0.0.1:4010', credentials: {} },
    ]);
    expect(config.publicUrl).toBeUndefined();
    expect(config.apiKeys).toEqual([]);
    expect(config.adminToken).toBeUndefined();
  });

  it('lets webhooks go to private addresses only in the all-local mode, unless WEBHOOK_ALLOW_PRIVATE_TARGETS says otherwise', () => {
    const allow = (env: Record<string, string>) => loadConfig(env).notifications.allowPrivateTargets;
    expect(allow({})).toBe(true);
    expect(allow({ DATABASE_URL: 'postgres://u:p@db:5432/broker' })).toBe(false);
    expect(allow({ PROVIDERS: 'primary=sim:http://sim:4010', SIM_WEBHOOK_SECRET: 'x'.repeat(16) })).toBe(false);
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
    ['PROVIDERS', 'primary', /PROVIDERS entry "primary" must look like name=adapter or name=adapter:http/],
    [
      'PROVIDERS',
      'a=plivo:http://x',
      /PROVIDERS entry "a" names adapter "plivo"; known adapters: sim, twilio, vonage, africastalking, infobip/,
    ],
    ['PROVIDERS', 'a=sim', /PROVIDERS entry "a" needs the simulator's URL: a=sim:http:\/\/host:port/],
    ['PUBLIC_URL', 'ftp://broker.example', /PUBLIC_URL must be an http\(s\) URL without query or fragment/],
    ['PUBLIC_URL', 'https://broker.example/?a=1', /PUBLIC_URL must be an http\(s\) URL without query or fragment/],
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

  it('has no built-in webhook secret: a configured sim provider without one refuses to start, naming the variable', () => {
    const load = () => loadConfig({ PROVIDERS: 'primary=sim:http://sim:4010' });
    expect(load).toThrow(/^invalid configuration: SIM_WEBHOOK_SECRET must be set when PROVIDERS names a sim provider$/);
    expect(loadConfig({}).simWebhookSecret).toBeUndefined();
    expect(loadConfig({ PROVIDERS: 'primary=sim:http://sim:4010', SIM_WEBHOOK_SECRET: 'x'.repeat(16) }).simWebhookSecret).toBe(
      'x'.repeat(16),
    );
    expect(() => loadConfig({ SIM_WEBHOOK_SECRET: 'x'.repeat(15) })).toThrow(
      /^invalid configuration: SIM_WEBHOOK_SECRET must be at least 16 characters$/,
    );
  });

  it('listens on loopback in the all-local mode and on every interface with PROVIDERS, unless HOST says otherwise', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ PROVIDERS: 'primary=sim:http://sim:4010', SIM_WEBHOOK_SECRET: 'x'.repeat(16) }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(() => loadConfig({ HOST: 'everywhere' })).toThrow(/^invalid configuration: HOST must be an IPv4 or IPv6 address/);
  });

  it('requires DATABASE_URL and PROVIDERS for the production entry point, which starts neither a database nor a simulator', () => {
    const deployed = {
      DATABASE_URL: 'postgres://u:p@db/broker',
      PROVIDERS: 'primary=sim:http://sim:4010',
      SIM_WEBHOOK_SECRET: 'x'.repeat(16),
    };
    expect(loadConfig(deployed, { standalone: true }).databaseUrl).toBe(deployed.DATABASE_URL);
    expect(() => loadConfig({}, { standalone: true })).toThrow(
      /^invalid configuration: DATABASE_URL must be set: this entry point starts no PostgreSQL of its own \(npm start does\); PROVIDERS must be set: this entry point starts no simulator \(npm start does\)$/,
    );
    expect(() => loadConfig({ ...deployed, DATABASE_URL: '' }, { standalone: true })).toThrow(
      /^invalid configuration: DATABASE_URL must be set/,
    );
    expect(() => loadConfig({ ...deployed, PROVIDERS: undefined }, { standalone: true })).toThrow(
      /^invalid configuration: PROVIDERS must be set/,
    );
    // npm start's launcher loads the same variables without the requirement.
    expect(loadConfig({}).databaseUrl).toBeUndefined();
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
      { name: 'main', adapter: 'sim', baseUrl: 'http://sim:4010', credentials: {} },
      { name: 'backup', adapter: 'sim', baseUrl: 'https://b.example', credentials: {} },
    ]);
  });

  it('takes a vendor adapter without a URL, or with one that overrides its API base', () => {
    expect(parseProviders('primary=twilio,edge=twilio:http://127.0.0.1:4999/')).toEqual([
      { name: 'primary', adapter: 'twilio', credentials: {} },
      { name: 'edge', adapter: 'twilio', baseUrl: 'http://127.0.0.1:4999', credentials: {} },
    ]);
  });

  it('refuses a name given twice', () => {
    expect(() => parseProviders('a=sim:http://x,a=sim:http://y')).toThrow('PROVIDERS names "a" twice');
  });
});

describe('vendor provider configuration', () => {
  const SID = 'AC' + '0123456789abcdef'.repeat(2);
  const TOKEN = 'f'.repeat(32);
  const twilio = {
    PROVIDERS: 'primary=twilio,failover=sim:http://127.0.0.1:4010',
    SIM_WEBHOOK_SECRET: 'vendor-spec-sim-secret',
    PUBLIC_URL: 'https://broker.example.com/',
    PROVIDER_PRIMARY_ACCOUNT_SID: SID,
    PROVIDER_PRIMARY_AUTH_TOKEN: TOKEN,
  };
  const oneLine = (env: Record<string, string | undefined>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('\n');
      return (error as Error).message;
    }
    throw new Error('the configuration was accepted');
  };

  it("reads each provider's credentials by its name, and PUBLIC_URL without its trailing slash", () => {
    const config = loadConfig(twilio);
    expect(config.publicUrl).toBe('https://broker.example.com');
    expect(config.simulated).toBe(false);
    const [primary, failover] = config.providers;
    expect(primary).toMatchObject({ name: 'primary', adapter: 'twilio', credentials: { accountSid: SID } });
    expect(String(primary.credentials.authToken)).toBe('[secret]');
    expect((primary.credentials.authToken as { reveal(): string }).reveal()).toBe(TOKEN);
    expect(failover).toEqual({ name: 'failover', adapter: 'sim', baseUrl: 'http://127.0.0.1:4010', credentials: {} });
    expect(JSON.stringify(config)).not.toContain(TOKEN);
  });

  it('upper-cases the provider name and turns dashes into underscores', () => {
    const config = loadConfig({
      PROVIDERS: 'us-east=twilio',
      PUBLIC_URL: 'https://b.example',
      PROVIDER_US_EAST_ACCOUNT_SID: SID,
      PROVIDER_US_EAST_AUTH_TOKEN: TOKEN,
    });
    expect(config.providers[0].credentials.accountSid).toBe(SID);
  });

  it('needs PUBLIC_URL when a real vendor is configured, and only then', () => {
    expect(oneLine({ ...twilio, PUBLIC_URL: undefined })).toMatch(
      /^invalid configuration: PUBLIC_URL is required when a real vendor is configured \(provider "primary" uses twilio\)$/,
    );
    expect(loadConfig({ PROVIDERS: 'a=sim:http://127.0.0.1:1', SIM_WEBHOOK_SECRET: 'x'.repeat(16) }).publicUrl).toBeUndefined();
  });

  it.each([
    ['PROVIDER_PRIMARY_ACCOUNT_SID', undefined, /PROVIDER_PRIMARY_ACCOUNT_SID is required for provider "primary" \(twilio\)/],
    ['PROVIDER_PRIMARY_ACCOUNT_SID', '  ', /PROVIDER_PRIMARY_ACCOUNT_SID is required/],
    ['PROVIDER_PRIMARY_ACCOUNT_SID', 'AC' + 'a'.repeat(31), /PROVIDER_PRIMARY_ACCOUNT_SID must be AC followed by 32 lowercase hex digits/],
    ['PROVIDER_PRIMARY_ACCOUNT_SID', 'AC' + 'a'.repeat(33), /PROVIDER_PRIMARY_ACCOUNT_SID must be AC followed by 32/],
    ['PROVIDER_PRIMARY_ACCOUNT_SID', 'SK' + 'a'.repeat(32), /PROVIDER_PRIMARY_ACCOUNT_SID must be AC followed by 32/],
    ['PROVIDER_PRIMARY_ACCOUNT_SID', 'AC' + 'g'.repeat(32), /PROVIDER_PRIMARY_ACCOUNT_SID must be AC followed by 32/],
    ['PROVIDER_PRIMARY_AUTH_TOKEN', undefined, /PROVIDER_PRIMARY_AUTH_TOKEN is required for provider "primary" \(twilio\)/],
    ['PROVIDER_PRIMARY_AUTH_TOKEN', 'e'.repeat(31), /PROVIDER_PRIMARY_AUTH_TOKEN must be the 32-hex-digit auth token/],
    ['PROVIDER_PRIMARY_AUTH_TOKEN', 'e'.repeat(33), /PROVIDER_PRIMARY_AUTH_TOKEN must be the 32-hex-digit auth token/],
  ])('refuses %s=%p with one line naming it', (name, value, message) => {
    expect(oneLine({ ...twilio, [name]: value })).toMatch(message);
  });

  it('accepts the account SID and token at their exact lengths', () => {
    expect(() =>
      loadConfig({ ...twilio, PROVIDER_PRIMARY_ACCOUNT_SID: 'AC' + '9'.repeat(32), PROVIDER_PRIMARY_AUTH_TOKEN: 'A'.repeat(32) }),
    ).not.toThrow();
  });

  it('never echoes a rejected auth token, and names the account SID it rejects', () => {
    const secret = 'not-a-token-0123456789-secret';
    expect(oneLine({ ...twilio, PROVIDER_PRIMARY_AUTH_TOKEN: secret })).not.toContain(secret);
    expect(oneLine({ ...twilio, PROVIDER_PRIMARY_ACCOUNT_SID: 'ACnope' })).toContain('(got "ACnope")');
  });
});

describe('Vonage provider configuration', () => {
  const { privateKey: PEM } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const vonage = {
    PROVIDERS: 'primary=twilio,failover=vonage',
    PUBLIC_URL: 'https://broker.example.com',
    PROVIDER_PRIMARY_ACCOUNT_SID: 'AC' + '0123456789abcdef'.repeat(2),
    PROVIDER_PRIMARY_AUTH_TOKEN: 'f'.repeat(32),
    PROVIDER_FAILOVER_API_KEY: 'abcd1234',
    PROVIDER_FAILOVER_API_SECRET: 'Abcdef0123456789',
    PROVIDER_FAILOVER_APPLICATION_ID: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
    PROVIDER_FAILOVER_SIGNATURE_SECRET: 'signature-secret-0123456789',
  };
  const problem = (env: Record<string, string | undefined>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('\n');
      return (error as Error).message;
    }
    throw new Error('the configuration was accepted');
  };

  it('reads the key, secret, application and signature secret; the private key is optional', () => {
    const failover = loadConfig(vonage).providers[1];
    expect(failover).toMatchObject({ name: 'failover', adapter: 'vonage', credentials: { apiKey: 'abcd1234' } });
    expect(failover.credentials.privateKey).toBeUndefined();
    expect(String(failover.credentials.apiSecret)).toBe('[secret]');
    expect(String(failover.credentials.signatureSecret)).toBe('[secret]');
  });

  it('takes the private key as PEM text (newlines written \\n too) or as the path of its file', () => {
    const asText = loadConfig({ ...vonage, PROVIDER_FAILOVER_PRIVATE_KEY: PEM.replace(/\n/g, '\\n') }).providers[1];
    expect((asText.credentials.privateKey as { reveal(): string }).reveal()).toBe(PEM);
    const dir = mkdtempSync(join(tmpdir(), 'vonage-key-'));
    writeFileSync(join(dir, 'private.key'), PEM);
    const asFile = loadConfig({ ...vonage, PROVIDER_FAILOVER_PRIVATE_KEY: join(dir, 'private.key') }).providers[1];
    expect((asFile.credentials.privateKey as { reveal(): string }).reveal()).toBe(PEM);
    rmSync(dir, { recursive: true });
  });

  it.each([
    [
      'PROVIDER_FAILOVER_PRIVATE_KEY',
      '/nonexistent/private.key',
      /^invalid configuration: PROVIDER_FAILOVER_PRIVATE_KEY must be the application's RSA private key/,
    ],
    [
      'PROVIDER_FAILOVER_PRIVATE_KEY',
      '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----',
      /PROVIDER_FAILOVER_PRIVATE_KEY must be/,
    ],
    ['PROVIDER_FAILOVER_API_KEY', undefined, /PROVIDER_FAILOVER_API_KEY is required for provider "failover" \(vonage\)/],
    ['PROVIDER_FAILOVER_API_KEY', 'abcd123', /PROVIDER_FAILOVER_API_KEY must be the 8-character API key/],
    ['PROVIDER_FAILOVER_API_SECRET', undefined, /PROVIDER_FAILOVER_API_SECRET is required/],
    ['PROVIDER_FAILOVER_APPLICATION_ID', 'my-app', /PROVIDER_FAILOVER_APPLICATION_ID must be the application's id/],
    ['PROVIDER_FAILOVER_SIGNATURE_SECRET', undefined, /PROVIDER_FAILOVER_SIGNATURE_SECRET is required/],
    ['PROVIDER_FAILOVER_SIGNATURE_SECRET', 'short', /PROVIDER_FAILOVER_SIGNATURE_SECRET must be the signature secret/],
  ])('refuses %s=%p with one line naming it', (name, value, message) => {
    expect(problem({ ...vonage, [name]: value })).toMatch(message);
  });

  it('never echoes a rejected private key or secret', () => {
    const bad = '-----BEGIN PRIVATE KEY-----\nsecret-material\n-----END PRIVATE KEY-----';
    expect(problem({ ...vonage, PROVIDER_FAILOVER_PRIVATE_KEY: bad })).not.toContain('secret-material');
    expect(problem({ ...vonage, PROVIDER_FAILOVER_API_SECRET: 'has space' })).not.toContain('has space');
  });
});

describe("Nigerian vendors' credentials (PROVIDERS=primary=africastalking,failover=infobip)", () => {
  const nigeria = {
    PROVIDERS: 'primary=africastalking,failover=infobip',
    PUBLIC_URL: 'https://broker.example.com',
    PROVIDER_PRIMARY_USERNAME: 'lagos-rides',
    PROVIDER_PRIMARY_API_KEY: 'atsk_' + '0123456789abcdef'.repeat(4),
    PROVIDER_PRIMARY_WEBHOOK_TOKEN: 'p'.repeat(40),
    PROVIDER_FAILOVER_API_KEY: '0123456789abcdef0123456789abcdef-0a1b2c3d',
    PROVIDER_FAILOVER_WEBHOOK_TOKEN: 'f'.repeat(40),
  };
  const problem = (env: Record<string, string | undefined>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('the configuration was accepted');
  };

  it('reads both, secrets as Secret', () => {
    const [primary, failover] = loadConfig(nigeria).providers;
    expect(primary).toMatchObject({ name: 'primary', adapter: 'africastalking', credentials: { username: 'lagos-rides' } });
    expect(String(primary.credentials.apiKey)).toBe('[secret]');
    expect(String(primary.credentials.webhookToken)).toBe('[secret]');
    expect(failover).toMatchObject({ name: 'failover', adapter: 'infobip' });
    expect(String(failover.credentials.apiKey)).toBe('[secret]');
    expect(
      loadConfig({ ...nigeria, PROVIDERS: 'primary=africastalking:http://127.0.0.1:4999,failover=infobip' }).providers[0].baseUrl,
    ).toBe('http://127.0.0.1:4999');
  });

  it.each([
    ['PROVIDER_PRIMARY_USERNAME', undefined, /PROVIDER_PRIMARY_USERNAME is required for provider "primary" \(africastalking\)/],
    ['PROVIDER_PRIMARY_USERNAME', 'two words', /PROVIDER_PRIMARY_USERNAME must be the application's username \(.*\(got "two words"\)/],
    ['PROVIDER_PRIMARY_API_KEY', 'short', /PROVIDER_PRIMARY_API_KEY must be the application's API key/],
    ['PROVIDER_PRIMARY_WEBHOOK_TOKEN', undefined, /PROVIDER_PRIMARY_WEBHOOK_TOKEN is required for provider "primary" \(africastalking\)/],
    ['PROVIDER_PRIMARY_WEBHOOK_TOKEN', 'too-short', /PROVIDER_PRIMARY_WEBHOOK_TOKEN must be 32 to 128 letters/],
    ['PROVIDER_FAILOVER_API_KEY', undefined, /PROVIDER_FAILOVER_API_KEY is required for provider "failover" \(infobip\)/],
    ['PROVIDER_FAILOVER_WEBHOOK_TOKEN', 'x'.repeat(31), /PROVIDER_FAILOVER_WEBHOOK_TOKEN must be 32 to 128/],
    ['PUBLIC_URL', undefined, /PUBLIC_URL is required when a real vendor is configured \(provider "primary" uses africastalking\)/],
  ])('refuses %s=%p with a line naming it', (name, value, message) => {
    expect(problem({ ...nigeria, [name]: value })).toMatch(message);
  });

  it('never echoes a refused key or token', () => {
    expect(problem({ ...nigeria, PROVIDER_PRIMARY_WEBHOOK_TOKEN: 'secret token!' })).not.toContain('secret token!');
    expect(problem({ ...nigeria, PROVIDER_FAILOVER_API_KEY: 'bad key value' })).not.toContain('bad key value');
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

describe('intercept settings', () => {
  it('waits 2 000 ms for an intercept and lets the interaction through when it does not answer', () => {
    expect(loadConfig({}).intercept).toEqual({ timeoutMs: 2_000, onError: 'allow' });
  });

  it('takes INTERCEPT_TIMEOUT_MS from 10 to 30 000 and INTERCEPT_ON_ERROR allow or block', () => {
    expect(loadConfig({ INTERCEPT_TIMEOUT_MS: '10', INTERCEPT_ON_ERROR: 'block' }).intercept).toEqual({ timeoutMs: 10, onError: 'block' });
    expect(loadConfig({ INTERCEPT_TIMEOUT_MS: '30000' }).intercept.timeoutMs).toBe(30_000);
    expect(() => loadConfig({ INTERCEPT_TIMEOUT_MS: '9' })).toThrow(/INTERCEPT_TIMEOUT_MS must be an integer from 10 to 30000/);
    expect(() => loadConfig({ INTERCEPT_TIMEOUT_MS: '30001' })).toThrow(/INTERCEPT_TIMEOUT_MS/);
    expect(() => loadConfig({ INTERCEPT_ON_ERROR: 'deny' })).toThrow(/INTERCEPT_ON_ERROR must be allow or block/);
  });
});

describe('operations settings', () => {
  it('erases message texts after 30 days and reads the cluster gauges every 15 s by default', () => {
    expect(loadConfig({})).toMatchObject({ interactionTextRetentionDays: 30, metricsRefreshMs: 15_000 });
  });

  it('takes INTERACTION_TEXT_RETENTION_DAYS from 1 to 3650 and METRICS_REFRESH_MS from 100 to 3 600 000', () => {
    expect(loadConfig({ INTERACTION_TEXT_RETENTION_DAYS: '1', METRICS_REFRESH_MS: '100' })).toMatchObject({
      interactionTextRetentionDays: 1,
      metricsRefreshMs: 100,
    });
    expect(loadConfig({ INTERACTION_TEXT_RETENTION_DAYS: '3650', METRICS_REFRESH_MS: '3600000' })).toMatchObject({
      interactionTextRetentionDays: 3650,
      metricsRefreshMs: 3_600_000,
    });
    for (const days of ['0', '3651', '1.5', 'forever'])
      expect(() => loadConfig({ INTERACTION_TEXT_RETENTION_DAYS: days })).toThrow(
        /INTERACTION_TEXT_RETENTION_DAYS must be an integer from 1 to 3650/,
      );
    for (const ms of ['99', '3600001']) expect(() => loadConfig({ METRICS_REFRESH_MS: ms })).toThrow(/METRICS_REFRESH_MS/);
  });
});

describe('TRUST_PROXY', () => {
  it('trusts no proxy by default: the connection is the client', () => {
    expect(loadConfig({}).trustProxy).toBe(0);
  });

  it.each([
    ['1', 1],
    ['32', 32],
    ['10.0.0.5', ['10.0.0.5']],
    ['10.0.0.0/8, 192.168.1.1,::1', ['10.0.0.0/8', '192.168.1.1', '::1']],
    ['fd00::/8,loopback', ['fd00::/8', 'loopback']],
  ])('takes %s as a hop count or the proxies’ addresses', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['33', 'true', '10.0.0.0/33', '::/129', 'proxy.example.com', '10.0.0.1/8/1', '10.0.0.1,,10.0.0.2', '-1'])(
    'refuses %s in one line naming the variable',
    (value) => {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/^invalid configuration: TRUST_PROXY must be a hop count/);
    },
  );
});

describe('session rescue settings', () => {
  it('moves at most 10 sessions a second and looks for due rescues every second by default', () => {
    expect(loadConfig({}).rescue).toEqual({ movesPerSecond: 10, checkIntervalMs: 1_000 });
  });

  it('takes RESCUE_MOVES_PER_SECOND from 0.01 to 1000 and RESCUE_CHECK_INTERVAL_MS from 10 to 3 600 000', () => {
    expect(loadConfig({ RESCUE_MOVES_PER_SECOND: '0.01', RESCUE_CHECK_INTERVAL_MS: '10' }).rescue).toEqual({
      movesPerSecond: 0.01,
      checkIntervalMs: 10,
    });
    expect(loadConfig({ RESCUE_MOVES_PER_SECOND: '1000', RESCUE_CHECK_INTERVAL_MS: '3600000' }).rescue).toEqual({
      movesPerSecond: 1000,
      checkIntervalMs: 3_600_000,
    });
    for (const rate of ['0', '0.009', '1001', 'fast'])
      expect(() => loadConfig({ RESCUE_MOVES_PER_SECOND: rate })).toThrow(/RESCUE_MOVES_PER_SECOND must be a number from 0.01 to 1000/);
    for (const ms of ['9', '3600001', '2.5'])
      expect(() => loadConfig({ RESCUE_CHECK_INTERVAL_MS: ms })).toThrow(/RESCUE_CHECK_INTERVAL_MS must be an integer from 10 to 3600000/);
  });
});
