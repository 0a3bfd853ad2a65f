import { isIP } from 'node:net';
import { ADAPTERS, VENDOR_ADAPTERS, readCredentials, type AdapterName } from '@app/cpaas';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import type { BrokerConfig, ProviderConfig } from './broker-config';
import { EnvironmentVariables } from './env.dto';
import { publishedExampleProblems } from './published-examples';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const OPTIONAL = [
  'HOST',
  'SIM_WEBHOOK_SECRET',
  'DATABASE_URL',
  'PROVIDERS',
  'PUBLIC_URL',
  'BROKER_API_KEY',
  'ADMIN_TOKEN',
  'OPS_WEBHOOK_URL',
  'OPS_WEBHOOK_SECRET',
  'WEBHOOK_ALLOW_PRIVATE_TARGETS',
  'LOG_FORMAT',
  'TRUST_PROXY',
  'METRICS_TOKEN',
];
interface ConfigRuntime {
  terminal?: boolean;
  standalone?: boolean;
}

const SECRET = ['DATABASE_URL', 'BROKER_API_KEY', 'ADMIN_TOKEN', 'SIM_WEBHOOK_SECRET', 'OPS_WEBHOOK_SECRET', 'METRICS_TOKEN'];

/**
 * Reads the environment once into a typed config. A bad value throws a ConfigError whose message
 * is one line naming each bad variable and what it allows. `runtime.terminal`: the output goes to a
 * terminal, so LOG_FORMAT defaults to readable lines. `runtime.standalone`: the production entry
 * point, which starts neither a database nor a simulator, so DATABASE_URL and PROVIDERS are required.
 */
export function loadConfig(env: Record<string, string | undefined>, runtime: ConfigRuntime = {}): BrokerConfig {
  const known = configVariables();
  // Only our variables, and an empty value counts as unset.
  const given = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => known.includes(key) && value !== undefined && value.trim() !== ''),
  );
  const vars = plainToInstance(EnvironmentVariables, given);
  const problems = validateSync(vars, { forbidUnknownValues: false }).map((error) => describe(error, given));
  let providers: ProviderConfig[] = [];
  try {
    providers = vars.PROVIDERS ? parseProviders(vars.PROVIDERS) : simulatedProviders(vars.SIM_PORT, vars.HOST);
  } catch (error) {
    problems.push((error as Error).message);
  }
  for (const provider of providers) {
    const read = readCredentials(provider.name, provider.adapter, env);
    provider.credentials = read.credentials;
    problems.push(...read.problems);
  }
  const vendor = providers.find((p) => VENDOR_ADAPTERS.includes(p.adapter));
  if (vendor && !vars.PUBLIC_URL)
    problems.push(`PUBLIC_URL is required when a real vendor is configured (provider "${vendor.name}" uses ${vendor.adapter})`);
  // A simulator reachable by others must not accept webhooks signed with a secret anyone can read.
  if (vars.PROVIDERS && providers.some((p) => p.adapter === 'sim') && !vars.SIM_WEBHOOK_SECRET)
    problems.push('SIM_WEBHOOK_SECRET must be set when PROVIDERS names a sim provider');
  if (vars.HTTP_HEADERS_TIMEOUT_MS > vars.HTTP_REQUEST_TIMEOUT_MS)
    problems.push('HTTP_HEADERS_TIMEOUT_MS must be at most HTTP_REQUEST_TIMEOUT_MS');
  if (vars.SSE_MAX_STREAMS_PER_CLIENT > vars.SSE_MAX_STREAMS) problems.push('SSE_MAX_STREAMS_PER_CLIENT must be at most SSE_MAX_STREAMS');
  if (vars.WEBHOOK_RETRY_MAX_MS < vars.WEBHOOK_RETRY_BASE_MS) problems.push('WEBHOOK_RETRY_MAX_MS must be at least WEBHOOK_RETRY_BASE_MS');
  if (vars.WEBHOOK_BREAKER_MAX_RESET_MS < vars.WEBHOOK_BREAKER_RESET_MS)
    problems.push('WEBHOOK_BREAKER_MAX_RESET_MS must be at least WEBHOOK_BREAKER_RESET_MS');
  // An owner must outlive its slowest attempt, or a live replica's deliveries would be taken over.
  if (vars.WEBHOOK_LEASE_MS <= vars.WEBHOOK_ATTEMPT_TIMEOUT_MS)
    problems.push('WEBHOOK_LEASE_MS must be greater than WEBHOOK_ATTEMPT_TIMEOUT_MS');
  // Leadership must move within two health intervals of a leader's death (docs/operations.md).
  if (vars.BREAKER_LEADER_LEASE_MS > vars.BREAKER_HEALTH_INTERVAL_MS)
    problems.push('BREAKER_LEADER_LEASE_MS must be at most BREAKER_HEALTH_INTERVAL_MS');
  if (vars.BREAKER_LEADER_LEASE_MS !== 0 && vars.BREAKER_LEADER_LEASE_MS < 30)
    problems.push('BREAKER_LEADER_LEASE_MS must be 0 or at least 30');
  if (vars.BREAKER_CLOSED_CHECK_INTERVAL_MS !== 0 && vars.BREAKER_CLOSED_CHECK_INTERVAL_MS < 10)
    problems.push('BREAKER_CLOSED_CHECK_INTERVAL_MS must be 0 (no checks while CLOSED) or at least 10');
  // A credential anyone can read in this repository is no credential (the all-local mode makes its own).
  problems.push(...publishedExampleProblems(vars));
  const trustProxy = parseTrustProxy(vars.TRUST_PROXY);
  if (trustProxy === null) problems.push(TRUST_PROXY_PROBLEM);
  if (runtime.standalone && !vars.DATABASE_URL)
    problems.push('DATABASE_URL must be set: this entry point starts no PostgreSQL of its own (npm start does)');
  if (runtime.standalone && !vars.PROVIDERS) problems.push('PROVIDERS must be set: this entry point starts no simulator (npm start does)');
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);

  return {
    port: vars.PORT,
    host: vars.HOST ?? (vars.PROVIDERS ? '0.0.0.0' : '127.0.0.1'),
    simPort: vars.SIM_PORT,
    dataDir: vars.DATA_DIR,
    databaseUrl: vars.DATABASE_URL,
    databasePoolSize: vars.DATABASE_POOL_SIZE,
    databasePoolIdleTimeoutMs: vars.DATABASE_POOL_IDLE_TIMEOUT_MS,
    providers,
    simulated: !vars.PROVIDERS,
    simWebhookSecret: vars.SIM_WEBHOOK_SECRET,
    publicUrl: vars.PUBLIC_URL?.replace(/\/+$/, ''),
    twilioProxyPublicUrl: vars.TWILIO_PROXY_PUBLIC_URL?.replace(/\/+$/, ''),
    breaker: {
      consecutiveFailures: vars.BREAKER_CONSECUTIVE_FAILURES,
      windowMs: vars.BREAKER_WINDOW_MS,
      windowErrorRate: vars.BREAKER_WINDOW_ERROR_RATE,
      windowMinCalls: vars.BREAKER_WINDOW_MIN_CALLS,
      healthIntervalMs: vars.BREAKER_HEALTH_INTERVAL_MS,
      closedCheckIntervalMs: vars.BREAKER_CLOSED_CHECK_INTERVAL_MS,
      halfOpenAfterPasses: vars.BREAKER_HALF_OPEN_AFTER_PASSES,
      halfOpenProbeShare: vars.BREAKER_HALF_OPEN_PROBE_SHARE,
      closeSuccessRate: vars.BREAKER_CLOSE_SUCCESS_RATE,
      closeAfterMs: vars.BREAKER_CLOSE_AFTER_MS,
      closeMinProbes: vars.BREAKER_CLOSE_MIN_PROBES,
      slowCallMs: vars.BREAKER_SLOW_CALL_MS,
      leaderLeaseMs: vars.BREAKER_LEADER_LEASE_MS || vars.BREAKER_HEALTH_INTERVAL_MS,
      outcomeBatchMs: vars.BREAKER_OUTCOME_BATCH_MS,
    },
    providerCallTimeoutMs: vars.PROVIDER_CALL_TIMEOUT_MS,
    apiKeys: vars.BROKER_API_KEY ? vars.BROKER_API_KEY.split(',') : [],
    adminToken: vars.ADMIN_TOKEN,
    metricsToken: vars.METRICS_TOKEN,
    sessions: {
      sweepIntervalMs: vars.SESSION_SWEEP_INTERVAL_MS,
      poolUsageRefreshMs: vars.POOL_USAGE_REFRESH_MS,
      relayRetryIntervalMs: vars.RELAY_RETRY_INTERVAL_MS,
      outOfSessionReply: vars.OUT_OF_SESSION_REPLY,
      simSeedNumbers: vars.SIM_SEED_NUMBERS,
      participantLimit: vars.SESSION_PARTICIPANT_LIMIT,
      numberQuarantineSeconds: vars.SESSION_NUMBER_QUARANTINE_SECONDS,
    },
    rescue: { movesPerSecond: vars.RESCUE_MOVES_PER_SECOND, checkIntervalMs: vars.RESCUE_CHECK_INTERVAL_MS },
    intercept: { timeoutMs: vars.INTERCEPT_TIMEOUT_MS, onError: vars.INTERCEPT_ON_ERROR },
    notifications: {
      opsWebhookUrl: vars.OPS_WEBHOOK_URL,
      opsWebhookSecret: vars.OPS_WEBHOOK_SECRET,
      // Unset: allowed only in the all-local mode (no DATABASE_URL, no PROVIDERS), for a receiver on this machine.
      allowPrivateTargets: vars.WEBHOOK_ALLOW_PRIVATE_TARGETS
        ? vars.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true'
        : !vars.DATABASE_URL && !vars.PROVIDERS,
      minPort: vars.WEBHOOK_MIN_PORT,
      retryBaseMs: vars.WEBHOOK_RETRY_BASE_MS,
      retryMaxMs: vars.WEBHOOK_RETRY_MAX_MS,
      giveUpAfterMs: vars.WEBHOOK_GIVE_UP_AFTER_MS,
      connectTimeoutMs: vars.WEBHOOK_CONNECT_TIMEOUT_MS,
      attemptTimeoutMs: vars.WEBHOOK_ATTEMPT_TIMEOUT_MS,
      downAfterFailures: vars.WEBHOOK_DOWN_AFTER_FAILURES,
      downRetryIntervalMs: vars.WEBHOOK_DOWN_RETRY_INTERVAL_MS,
      maxInFlightPerEndpoint: vars.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT,
      breakerFailures: vars.WEBHOOK_BREAKER_FAILURES,
      breakerResetMs: vars.WEBHOOK_BREAKER_RESET_MS,
      breakerMaxResetMs: vars.WEBHOOK_BREAKER_MAX_RESET_MS,
      pollIntervalMs: vars.WEBHOOK_POLL_INTERVAL_MS,
      leaseMs: vars.WEBHOOK_LEASE_MS,
      secretOverlapMs: vars.WEBHOOK_SECRET_OVERLAP_MS,
    },
    metricsRefreshMs: vars.METRICS_REFRESH_MS,
    interactionTextRetentionDays: vars.INTERACTION_TEXT_RETENTION_DAYS,
    logLevel: vars.LOG_LEVEL,
    logFormat: vars.LOG_FORMAT ?? (runtime.terminal ? 'pretty' : 'json'),
    requestBodyLimitBytes: vars.REQUEST_BODY_LIMIT_BYTES,
    trustProxy: trustProxy!,
    rateLimits: {
      creates: { perSecond: vars.RATE_LIMIT_CREATES_PER_SECOND, burst: vars.RATE_LIMIT_CREATES_BURST },
      reads: { perSecond: vars.RATE_LIMIT_READS_PER_SECOND, burst: vars.RATE_LIMIT_READS_BURST },
      authFailures: { perSecond: vars.RATE_LIMIT_AUTH_FAILURES_PER_SECOND, burst: vars.RATE_LIMIT_AUTH_FAILURES_BURST },
      sessionRelays: { perSecond: vars.RATE_LIMIT_SESSION_RELAYS_PER_SECOND, burst: vars.RATE_LIMIT_SESSION_RELAYS_BURST },
    },
    http: {
      headersTimeoutMs: vars.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: vars.HTTP_REQUEST_TIMEOUT_MS,
      maxStreams: vars.SSE_MAX_STREAMS,
      maxStreamsPerClient: vars.SSE_MAX_STREAMS_PER_CLIENT,
    },
  };
}

/** Every variable the broker reads. */
export function configVariables(): string[] {
  return [...Object.keys(new EnvironmentVariables()), ...OPTIONAL];
}

function describe(error: ValidationError, given: Record<string, string | undefined>): string {
  const messages = [...new Set(Object.values(error.constraints ?? {}))];
  const got = given[error.property];
  // Never echo a secret back into a log.
  const shown = got === undefined || SECRET.includes(error.property) ? '' : ` (got "${got}")`;
  return `${messages.join(', ')}${shown}`;
}

/** The in-process simulator listens on HOST too; a wildcard address is reached over loopback. */
function simulatedProviders(simPort: number, host = '127.0.0.1'): ProviderConfig[] {
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const baseUrl = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${simPort}`;
  return [
    { name: 'primary', adapter: 'sim', baseUrl, credentials: {} },
    { name: 'failover', adapter: 'sim', baseUrl, credentials: {} },
  ];
}

/**
 * `primary=twilio,failover=sim:http://sim:4010`: a vendor adapter needs no URL (`name=twilio:https://host`
 * overrides its API base); the simulator's needs one. Credentials are read afterwards.
 */
export function parseProviders(value: string): ProviderConfig[] {
  const providers = value.split(',').map((entry): ProviderConfig => {
    const match = /^([a-z][a-z0-9-]{0,31})=([a-z]+)(?::(https?:\/\/\S+))?$/.exec(entry.trim());
    if (!match)
      throw new Error(
        `PROVIDERS entry "${entry.trim()}" must look like name=adapter or name=adapter:http://host:port (name: lowercase letters, digits, dashes)`,
      );
    const [, name, adapterName, baseUrl] = match;
    if (!(ADAPTERS as readonly string[]).includes(adapterName))
      throw new Error(`PROVIDERS entry "${name}" names adapter "${adapterName}"; known adapters: ${ADAPTERS.join(', ')}`);
    const adapter = adapterName as AdapterName;
    if (!baseUrl && !VENDOR_ADAPTERS.includes(adapter))
      throw new Error(`PROVIDERS entry "${name}" needs the simulator's URL: ${name}=${adapter}:http://host:port`);
    return { name, adapter, ...(baseUrl ? { baseUrl: baseUrl.replace(/\/+$/, '') } : {}), credentials: {} };
  });
  const names = providers.map((p) => p.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate) throw new Error(`PROVIDERS names "${duplicate}" twice`);
  return providers;
}

const TRUST_PROXY_PROBLEM =
  'TRUST_PROXY must be a hop count from 0 to 32, or a comma-separated list of proxy addresses and CIDR ranges (or loopback, linklocal, uniquelocal)';
/** Express's names for address ranges (proxy-addr). */
const TRUST_PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: unset is 0 (no proxy: the connection is the client); null when it is not a valid value. */
function parseTrustProxy(value: string | undefined): number | string[] | null {
  if (value === undefined) return 0;
  if (/^\d+$/.test(value.trim())) {
    const hops = Number(value);
    return hops <= 32 ? hops : null;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  return entries.every(isProxyAddress) ? entries : null;
}

function isProxyAddress(entry: string): boolean {
  if (TRUST_PROXY_RANGES.includes(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** The one place the process environment is read. */
export function loadConfigFromEnvironment(runtime: Pick<ConfigRuntime, 'standalone'> = {}): BrokerConfig {
  return loadConfig(process.env, { ...runtime, terminal: process.stdout.isTTY === true });
}
