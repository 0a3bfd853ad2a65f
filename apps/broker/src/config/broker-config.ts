import type { LOG_LEVELS } from './env.dto';

/** Where a provider is reached and which adapter speaks to it. */
export interface ProviderConfig {
  name: string;
  adapter: 'sim';
  baseUrl: string;
}

export interface BreakerSettings {
  consecutiveFailures: number;
  windowMs: number;
  windowErrorRate: number;
  windowMinCalls: number;
  healthIntervalMs: number;
  halfOpenAfterPasses: number;
  halfOpenProbeShare: number;
  closeSuccessRate: number;
  closeAfterMs: number;
  closeMinProbes: number;
  slowCallMs: number;
}

/** The broker's configuration: validated once, typed, read everywhere else. */
export interface BrokerConfig {
  port: number;
  simPort: number;
  dataDir: string;
  /** Unset: the broker runs an embedded PostgreSQL under `dataDir`. */
  databaseUrl?: string;
  /** Connections per process, opened at start and kept (never closed for being idle). */
  databasePoolSize: number;
  /** 0: pooled connections are never closed for being idle. */
  databasePoolIdleTimeoutMs: number;
  providers: ProviderConfig[];
  /** True when PROVIDERS is unset: the providers are the simulator, started alongside the broker. */
  simulated: boolean;
  simWebhookSecret: string;
  breaker: BreakerSettings;
  providerCallTimeoutMs: number;
  apiKeys: string[];
  adminToken?: string;
  sessions: {
    sweepIntervalMs: number;
    /** 0: read at start only. */
    poolUsageRefreshMs: number;
    relayRetryIntervalMs: number;
    /** `reject`, or a text to reply with. */
    outOfSessionReply: string;
    simSeedNumbers: number;
  };
  notifications: {
    opsWebhookUrl?: string;
    opsWebhookSecret?: string;
    allowPrivateTargets: boolean;
    retryBaseMs: number;
    retryMaxMs: number;
    giveUpAfterMs: number;
    connectTimeoutMs: number;
    attemptTimeoutMs: number;
    downAfterFailures: number;
    downRetryIntervalMs: number;
    maxInFlightPerEndpoint: number;
    breakerFailures: number;
    breakerResetMs: number;
    breakerMaxResetMs: number;
    pollIntervalMs: number;
    leaseMs: number;
    secretOverlapMs: number;
  };
  logLevel: (typeof LOG_LEVELS)[number];
  logFormat: 'pretty' | 'json';
  requestBodyLimitBytes: number;
}

export const BROKER_CONFIG = Symbol('BROKER_CONFIG');
