/** The broker's JSON shapes, as the HTTP API (v1) sends and takes them. Timestamps are ISO 8601 strings. */

export type Channel = 'sms' | 'voice';
export type SessionStatus = 'active' | 'closed' | 'expired';
export type BreakerState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

export interface Participant {
  /** E.164, like `+2348030000001`. */
  number: string;
}

export interface Session {
  id: string;
  channel: Channel;
  status: SessionStatus;
  /** The provider the session was created on; it keeps it until it ends. */
  provider: string;
  /** The masked number both participants see, E.164. */
  proxyNumber: string;
  participants: [Participant, Participant] | Participant[];
  createdAt: string;
  expiresAt: string;
  callbackUrl: string | null;
  metadata: Record<string, unknown> | null;
}

export interface CreateSessionInput {
  channel: Channel;
  /** Exactly two distinct E.164 numbers. */
  participants: [Participant, Participant];
  /** Default 3600, at most 7 days. */
  ttlSeconds?: number;
  callbackUrl?: string;
  metadata?: Record<string, unknown>;
}

export interface ListSessionsQuery {
  status?: SessionStatus;
  /** Page size the broker is asked for. */
  limit?: number;
  /** Start from this cursor instead of the first page. */
  cursor?: string;
}

export interface SessionPage {
  sessions: Session[];
  nextCursor: string | null;
}

export interface Interaction {
  id: string;
  channel: Channel;
  from: string;
  to: string;
  status: string;
  createdAt: string;
}

export interface ProviderHealth {
  name: string;
  state: BreakerState;
  /** Non-null only while OPEN. */
  openedAt: string | null;
  /** The failure that most recently tripped the breaker. */
  lastError: string | null;
  /** Taken out of routing by an operator (separate from the breaker). */
  disabled?: boolean;
  /** When the current state was entered. */
  since?: string;
  /** Why the last transition happened. */
  reason?: string;
  consecutiveFailures?: number;
  windowCalls?: number;
  windowErrorRate?: number;
  healthPasses?: number;
  probes?: number;
  probeSuccesses?: number;
  /** Fields a newer broker adds are kept as they come. */
  [field: string]: unknown;
}

export interface CpaasHealth {
  providers: ProviderHealth[];
  timestamp: string;
}

export interface BreakerTransition {
  provider: string;
  from: BreakerState;
  to: BreakerState;
  reason: string;
  lastError: string | null;
  at: string;
}

/** One event of `GET /v1/health/cpaas/stream`. */
export type CpaasHealthEvent =
  { type: 'snapshot'; data: CpaasHealth } | { type: 'provider'; data: ProviderHealth } | { type: 'transition'; data: BreakerTransition };

/** One field of a validation problem. */
export interface ProblemFieldError {
  field: string;
  message: string;
}

/** RFC 9457 problem details, as every broker error is sent. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: ProblemFieldError[];
  errorId?: string;
  [extension: string]: unknown;
}

/**
 * What the `data` of every webhook event carries, whatever its type (the event types extend it).
 * Order is not guaranteed on delivery: sort by `receivedAt` when order matters.
 */
export interface WebhookEventDataBase {
  /** When the broker learned of what the event tells (ISO 8601): a message's arrival, a session's create or close, a breaker transition. Not the send time. */
  receivedAt: string;
}
