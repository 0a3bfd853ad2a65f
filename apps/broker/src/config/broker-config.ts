import type { CpaasProviderConfig, ProviderCredentials } from '@app/cpaas';
import type { LOG_LEVELS } from './env.dto';

/** Where a provider is reached, which adapter speaks to it, and its credentials (secrets as `Secret`). */
export type ProviderConfig = CpaasProviderConfig & { credentials: ProviderCredentials };

export interface BreakerSettings {
  consecutiveFailures: number;
  windowMs: number;
  windowErrorRate: number;
  windowMinCalls: number;
  healthIntervalMs: number;
  /** BREAKER_CLOSED_CHECK_INTERVAL_MS: the leader's check of a CLOSED provider that keeps no sessions; 0: none. */
  closedCheckIntervalMs: number;
  halfOpenAfterPasses: number;
  halfOpenProbeShare: number;
  closeSuccessRate: number;
  closeAfterMs: number;
  closeMinProbes: number;
  slowCallMs: number;
  /** How long the leader's lease lasts without a renewal (BREAKER_LEADER_LEASE_MS; 0 there means the health interval). */
  leaderLeaseMs: number;
  outcomeBatchMs: number;
}

/** The broker's configuration: validated once, typed, read everywhere else. */
export interface BrokerConfig {
  port: number;
  /** Listening address (HOST): loopback by default in the all-local mode. */
  host: string;
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
  /** Set whenever PROVIDERS names a sim provider; in the all-local mode `main.ts` makes one per data folder. */
  simWebhookSecret?: string;
  /**
   * `PUBLIC_URL`, no trailing slash: the broker as the vendors see it. Webhook signatures are
   * checked over it, and vendor adapters build their callback URLs from it. Required when a real
   * vendor adapter is configured; unset, a webhook's URL is the broker's own origin.
   */
  publicUrl?: string;
  breaker: BreakerSettings;
  providerCallTimeoutMs: number;
  apiKeys: string[];
  /** Where `apiKeys` came from, for the keys' label and the start-up line; unset: BROKER_API_KEY. */
  apiKeysFrom?: { label: string; description: string };
  adminToken?: string;
  /** METRICS_TOKEN: when set, `/metrics` and `/docs` require it as a bearer token. */
  metricsToken?: string;
  sessions: {
    sweepIntervalMs: number;
    /** 0: read at start only. */
    poolUsageRefreshMs: number;
    relayRetryIntervalMs: number;
    /** `reject`, or a text to reply with. */
    outOfSessionReply: string;
    simSeedNumbers: number;
    /** SESSION_PARTICIPANT_LIMIT: active sessions per account and participant number. */
    participantLimit: number;
  };
  /** Session rescue (docs/design.md#session-rescue): the breaker leader's pace and how often it looks. */
  rescue: {
    /** RESCUE_MOVES_PER_SECOND: at most this many moves a second, cluster-wide. */
    movesPerSecond: number;
    /** RESCUE_CHECK_INTERVAL_MS. */
    checkIntervalMs: number;
  };
  /** The synchronous question asked before each relay and bridge of a session with an intercept URL. */
  intercept: {
    timeoutMs: number;
    onError: 'allow' | 'block';
  };
  notifications: {
    opsWebhookUrl?: string;
    opsWebhookSecret?: string;
    allowPrivateTargets: boolean;
    /** WEBHOOK_MIN_PORT: callback URLs may name 80, 443 or this port and above. */
    minPort: number;
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
  /** METRICS_REFRESH_MS: how often the cluster gauges are read from the database. */
  metricsRefreshMs: number;
  /** INTERACTION_TEXT_RETENTION_DAYS: a message's text is erased this many days after it arrived. */
  interactionTextRetentionDays: number;
  logLevel: (typeof LOG_LEVELS)[number];
  logFormat: 'pretty' | 'json';
  requestBodyLimitBytes: number;
  /**
   * TRUST_PROXY: which proxies' `X-Forwarded-For` names the client (docs/security.md). A hop count (0: none,
   * the connection is the client), or the addresses and CIDR ranges of the proxies (Express's `trust proxy`).
   */
  trustProxy: number | string[];
  /**
   * Token buckets per API key, for wrong credentials per client address, and for relays per session
   * (docs/security.md), per replica.
   */
  rateLimits: Record<'creates' | 'reads' | 'authFailures' | 'sessionRelays', { perSecond: number; burst: number }>;
  /** Limits that hold before a request is authenticated (docs/security.md). */
  http: {
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    maxStreams: number;
    maxStreamsPerClient: number;
  };
}

export const BROKER_CONFIG = Symbol('BROKER_CONFIG');
