/**
 * The environment as the broker accepts it: every variable of the README's configuration
 * table, with its default and the values allowed. Validated once at start-up by `loadConfig`.
 */
import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsIP, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateBy } from 'class-validator';
import { TELEPHONY_DEFAULTS } from '@app/circuit-breaker';

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value);
const toNumber = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;

/** An integer variable within [min, max], told in one message whatever the fault. */
function IntVar(min: number, max: number): PropertyDecorator {
  const message = `$property must be an integer from ${min} to ${max}`;
  return applyDecorators(Transform(toInt), IsInt({ message }), Min(min, { message }), Max(max, { message }));
}

function NumberVar(min: number, max: number): PropertyDecorator {
  const message = `$property must be a number from ${min} to ${max}`;
  return applyDecorators(Transform(toNumber), IsNumber({}, { message }), Min(min, { message }), Max(max, { message }));
}

/** A number in [min, below): a rate the breaker needs strictly below 1, told in one message. */
function NumberBelowVar(min: number, below: number): PropertyDecorator {
  const message = `$property must be a number from ${min} to less than ${below}`;
  const inRange = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= min && value < below;
  return applyDecorators(Transform(toNumber), ValidateBy({ name: 'numberBelow', validator: { validate: inRange } }, { message }));
}

/** An integer in [min, max] that `step` divides, told in one message. */
function StepIntVar(min: number, max: number, step: number): PropertyDecorator {
  const message = `$property must be an integer from ${min} to ${max} that ${step} divides`;
  const valid = (value: unknown) =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max && value % step === 0;
  return applyDecorators(Transform(toInt), ValidateBy({ name: 'stepInt', validator: { validate: valid } }, { message }));
}

/** The provider breaker keeps its window in this many time buckets: the window must be a whole number of them. */
const BREAKER_WINDOW_BUCKETS = TELEPHONY_DEFAULTS.windowBuckets;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export class EnvironmentVariables {
  @IntVar(0, 65535)
  PORT = 3000;

  /** Listening address of the broker (and the in-process simulator); unset: 127.0.0.1 in the all-local mode, else 0.0.0.0. */
  @IsOptional()
  @IsIP(undefined, { message: 'HOST must be an IPv4 or IPv6 address, such as 127.0.0.1 or 0.0.0.0' })
  HOST?: string;

  @IntVar(0, 65535)
  SIM_PORT = 4010;

  @IsString()
  @MinLength(1)
  DATA_DIR = '.data';

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL?: string;

  /** Database connections per broker process, all opened at start and kept. */
  @IntVar(1, 500)
  DATABASE_POOL_SIZE = 20;

  /** Closes a pooled connection idle this long; 0 keeps them (node-postgres' own default would be 10 000). */
  @IntVar(0, 86_400_000)
  DATABASE_POOL_IDLE_TIMEOUT_MS = 0;

  /** `name=adapter:url` entries, comma-separated, in routing order. */
  @IsOptional()
  @IsString()
  PROVIDERS?: string;

  /** The broker's address as the vendors see it; required when PROVIDERS names a real vendor. */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s?#]+$/, { message: 'PUBLIC_URL must be an http(s) URL without query or fragment' })
  PUBLIC_URL?: string;

  /**
   * The Twilio-Proxy-compatible API as its clients reach it (its answers' resource and paging URLs); unset:
   * PUBLIC_URL + /compat/twilio-proxy, else the address each request came to.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s?#]+$/, { message: 'TWILIO_PROXY_PUBLIC_URL must be an http(s) URL without query or fragment' })
  TWILIO_PROXY_PUBLIC_URL?: string;

  @IntVar(1, 1000)
  BREAKER_CONSECUTIVE_FAILURES = 5;

  /** Kept in 120 buckets, so a multiple of 120 ms (every bucket the same width). */
  @StepIntVar(BREAKER_WINDOW_BUCKETS, 86_400_000, BREAKER_WINDOW_BUCKETS)
  BREAKER_WINDOW_MS = 120_000;

  /** Trips when the window's error rate is strictly greater: 1 could never trip. */
  @NumberBelowVar(0, 1)
  BREAKER_WINDOW_ERROR_RATE = 0.1;

  @IntVar(1, 1_000_000)
  BREAKER_WINDOW_MIN_CALLS = 10;

  @IntVar(10, 86_400_000)
  BREAKER_HEALTH_INTERVAL_MS = 30_000;

  /** The leader's check of a CLOSED provider that keeps no sessions (Twilio, Vonage); 0: none. 0 or at least 10. */
  @IntVar(0, 86_400_000)
  BREAKER_CLOSED_CHECK_INTERVAL_MS = 30_000;

  @IntVar(1, 1000)
  BREAKER_HALF_OPEN_AFTER_PASSES = 5;

  @NumberVar(0.001, 1)
  BREAKER_HALF_OPEN_PROBE_SHARE = 0.1;

  /** Closes when probe success is strictly greater: 1 could never close. */
  @NumberBelowVar(0, 1)
  BREAKER_CLOSE_SUCCESS_RATE = 0.95;

  @IntVar(0, 86_400_000)
  BREAKER_CLOSE_AFTER_MS = 300_000;

  @IntVar(1, 1_000_000)
  BREAKER_CLOSE_MIN_PROBES = 10;

  @IntVar(1, 600_000)
  BREAKER_SLOW_CALL_MS = 2000;

  /** 0: the health interval. The leader's lease lasts this long without a renewal (docs/operations.md). */
  @IntVar(0, 86_400_000)
  BREAKER_LEADER_LEASE_MS = 0;

  /** How long a replica gathers call outcomes before sending them to the leader in one NOTIFY. */
  @IntVar(1, 1_000)
  BREAKER_OUTCOME_BATCH_MS = 20;

  @IntVar(1, 600_000)
  PROVIDER_CALL_TIMEOUT_MS = 5000;

  /** One API key, or a comma-separated list making one account per key. */
  @IsOptional()
  @IsString()
  @Matches(/^[^,\s]{16,}(,[^,\s]{16,})*$/, {
    message: 'BROKER_API_KEY must be one or more comma-separated keys of at least 16 characters, no spaces',
  })
  BROKER_API_KEY?: string;

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'ADMIN_TOKEN must be at least 16 characters' })
  @MaxLength(512)
  ADMIN_TOKEN?: string;

  /** When set, `/metrics` and the API docs (`/docs`) answer only `Authorization: Bearer <METRICS_TOKEN>`. */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  @MaxLength(512)
  METRICS_TOKEN?: string;

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  /** `pretty`: one readable line per entry; `json`: pino's JSON lines. Unset: pretty on a terminal, JSON otherwise. */
  @IsOptional()
  @IsIn(['pretty', 'json'], { message: 'LOG_FORMAT must be pretty or json' })
  LOG_FORMAT?: 'pretty' | 'json';

  @IntVar(1024, 10 * 1024 * 1024)
  REQUEST_BODY_LIMIT_BYTES = 1024 * 1024;

  /** A client must send its request headers within this time (Node's default is 60 s). */
  @IntVar(100, 300_000)
  HTTP_HEADERS_TIMEOUT_MS = 10_000;

  /** A client must send its whole request, body included, within this time (Node's default is 300 s). */
  @IntVar(100, 300_000)
  HTTP_REQUEST_TIMEOUT_MS = 30_000;

  /** Concurrent Server-Sent Event streams (`/v1/health/cpaas/stream`) this replica serves; 503 beyond. */
  @IntVar(1, 100_000)
  SSE_MAX_STREAMS = 1_000;

  /** Concurrent Server-Sent Event streams per client address; 429 beyond. */
  @IntVar(1, 100_000)
  SSE_MAX_STREAMS_PER_CLIENT = 10;

  /**
   * Whose `X-Forwarded-For` to believe for the client address (failure throttle, stream caps): a hop count, or
   * the proxies' addresses and CIDR ranges. Unset: none; the connection's address is the client. Checked in loadConfig.
   */
  @IsOptional()
  @IsString()
  TRUST_PROXY?: string;

  /** Token bucket per API key for creates (every request that is not a GET): refill per second and burst. Per replica. */
  @NumberVar(0.01, 100_000)
  RATE_LIMIT_CREATES_PER_SECOND = 10;

  @IntVar(1, 1_000_000)
  RATE_LIMIT_CREATES_BURST = 50;

  /** Token bucket per API key for reads (GET): refill per second and burst. Per replica. */
  @NumberVar(0.01, 100_000)
  RATE_LIMIT_READS_PER_SECOND = 50;

  @IntVar(1, 1_000_000)
  RATE_LIMIT_READS_BURST = 200;

  /** Token bucket per client address for wrong API keys and admin tokens: refill per second and burst. Per replica. */
  @NumberVar(0.01, 100_000)
  RATE_LIMIT_AUTH_FAILURES_PER_SECOND = 1;

  @IntVar(1, 1_000_000)
  RATE_LIMIT_AUTH_FAILURES_BURST = 20;

  /** Token bucket per session for relayed texts and calls: refill per second and burst. Per replica. */
  @NumberVar(0.001, 100_000)
  RATE_LIMIT_SESSION_RELAYS_PER_SECOND = 0.5;

  @IntVar(1, 1_000_000)
  RATE_LIMIT_SESSION_RELAYS_BURST = 30;

  /** Active sessions one account may hold for one participant number on the shared pool; 429 beyond. */
  @IntVar(1, 1000)
  SESSION_PARTICIPANT_LIMIT = 3;

  /**
   * After a session ends, its proxy number and each of its participants are paired with no one else for this
   * long (the same two may share it again): a text to an old masked number never reaches a stranger. 0: off.
   */
  @IntVar(0, 2_592_000)
  SESSION_NUMBER_QUARANTINE_SECONDS = 86_400;

  /** How often the sweeper marks ended sessions expired and releases their bindings. */
  @IntVar(10, 3_600_000)
  SESSION_SWEEP_INTERVAL_MS = 10_000;

  /** How often pool use per provider is read back from the database; 0 reads it only at start (and when asked). */
  @IntVar(0, 3_600_000)
  POOL_USAGE_REFRESH_MS = 5_000;

  /** How often failed relays are retried (each relay backs off on its own schedule too). */
  @IntVar(10, 3_600_000)
  RELAY_RETRY_INTERVAL_MS = 2_000;

  /** What a sender with no active session on a proxy number gets: `reject`, or a text to reply with. */
  @IsString()
  @MinLength(1)
  @MaxLength(480)
  OUT_OF_SESSION_REPLY = 'reject';

  /** Sessions a session rescue moves per second at most, cluster-wide (the breaker leader moves them): a large pool does not hammer the failover. */
  @NumberVar(0.01, 1000)
  RESCUE_MOVES_PER_SECOND = 10;

  /** How often the breaker leader looks for sessions due a rescue (a provider OPEN for an account's afterSeconds). */
  @IntVar(10, 3_600_000)
  RESCUE_CHECK_INTERVAL_MS = 1_000;

  /** How long the broker waits for an intercept URL's answer before INTERCEPT_ON_ERROR decides. */
  @IntVar(10, 30_000)
  INTERCEPT_TIMEOUT_MS = 2_000;

  /** What an intercept that does not answer 2xx or 403 in time decides: let the interaction through, or block it. */
  @IsIn(['allow', 'block'], { message: 'INTERCEPT_ON_ERROR must be allow or block' })
  INTERCEPT_ON_ERROR: 'allow' | 'block' = 'allow';

  /** How often each replica reads the cluster gauges (active sessions, pool, webhook and relay backlogs) for /metrics. */
  @IntVar(100, 3_600_000)
  METRICS_REFRESH_MS = 15_000;

  /** Days after which a relayed message's text is erased (the interaction and its metadata stay). */
  @IntVar(1, 3650)
  INTERACTION_TEXT_RETENTION_DAYS = 30;

  /** Numbers seeded on each simulated provider at start-up (simulated setup only). */
  @IntVar(0, 1000)
  SIM_SEED_NUMBERS = 10;

  /** Where provider breaker transitions are sent as `provider.state_changed` webhooks. */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'OPS_WEBHOOK_URL must be an http(s) URL' })
  OPS_WEBHOOK_URL?: string;

  /** Lets webhooks go to loopback and private addresses: for development and tests only. Unset: only in the all-local mode. */
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'WEBHOOK_ALLOW_PRIVATE_TARGETS must be true or false' })
  WEBHOOK_ALLOW_PRIVATE_TARGETS?: 'true' | 'false';

  /** Lowest port a callback URL may name besides 80 and 443 (below it: well-known services a probe could map). */
  @IntVar(1, 65535)
  WEBHOOK_MIN_PORT = 1024;

  /** Signs `provider.state_changed` webhooks to OPS_WEBHOOK_URL (Standard Webhooks `whsec_…` or any string of 16+ characters). */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'OPS_WEBHOOK_SECRET must be at least 16 characters' })
  OPS_WEBHOOK_SECRET?: string;

  /** Wait after a webhook's first failed attempt; it doubles (plus up to 50 % jitter) after each failure. */
  @IntVar(1, 3_600_000)
  WEBHOOK_RETRY_BASE_MS = 5_000;

  /** Cap of the wait between attempts; once reached, the wait stays between 80 % and 100 % of it. */
  @IntVar(1, 86_400_000)
  WEBHOOK_RETRY_MAX_MS = 300_000;

  /** A webhook not delivered this long after its event was recorded is given up (72 h). */
  @IntVar(1_000, 2_592_000_000)
  WEBHOOK_GIVE_UP_AFTER_MS = 259_200_000;

  @IntVar(10, 600_000)
  WEBHOOK_CONNECT_TIMEOUT_MS = 5_000;

  /** Whole attempt: connect, send, status and the (at most 64 KB) response read. */
  @IntVar(10, 600_000)
  WEBHOOK_ATTEMPT_TIMEOUT_MS = 15_000;

  /** Failures in a row after which an endpoint is down and gets one attempt per WEBHOOK_DOWN_RETRY_INTERVAL_MS. */
  @IntVar(1, 1000)
  WEBHOOK_DOWN_AFTER_FAILURES = 3;

  @IntVar(10, 86_400_000)
  WEBHOOK_DOWN_RETRY_INTERVAL_MS = 300_000;

  @IntVar(1, 1000)
  WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 8;

  /** Per-callback-URL breaker: consecutive failures that open it, first reset timeout and its cap. */
  @IntVar(1, 1000)
  WEBHOOK_BREAKER_FAILURES = 5;

  @IntVar(10, 86_400_000)
  WEBHOOK_BREAKER_RESET_MS = 60_000;

  @IntVar(10, 86_400_000)
  WEBHOOK_BREAKER_MAX_RESET_MS = 600_000;

  /** How often the delivery worker looks for due webhooks when no notification woke it. */
  @IntVar(10, 3_600_000)
  WEBHOOK_POLL_INTERVAL_MS = 1_000;

  /** How long a replica owns an endpoint without renewing; a crashed replica's deliveries resume after it. */
  @IntVar(100, 3_600_000)
  WEBHOOK_LEASE_MS = 30_000;

  /** After a rotation, the previous webhook secret keeps signing this long (24 h). */
  @IntVar(0, 2_592_000_000)
  WEBHOOK_SECRET_OVERLAP_MS = 86_400_000;

  /**
   * Secret the simulator signs its inbound webhooks with (and the broker checks). No default:
   * required when PROVIDERS names a `sim` provider; the all-local `npm start` makes one per data folder.
   */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'SIM_WEBHOOK_SECRET must be at least 16 characters' })
  @MaxLength(512)
  SIM_WEBHOOK_SECRET?: string;
}
