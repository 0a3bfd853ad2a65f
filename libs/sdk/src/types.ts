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
  /** The two participants, in the order they were given. */
  participants: Participant[];
  createdAt: string;
  expiresAt: string;
  callbackUrl: string | null;
  /** What was given at creation; `{}` when nothing was. */
  metadata: Record<string, unknown>;
}

export interface CreateSessionInput {
  channel: Channel;
  /** Exactly two distinct E.164 numbers (a list built elsewhere is fine; the broker checks the count). */
  participants: readonly Participant[];
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

/** `undelivered`: the provider accepted a relayed text and later reported it undelivered; `canceled`: a bridged call the caller hung up before it was answered. */
export type InteractionStatus =
  'pending' | 'relayed' | 'delivered' | 'undelivered' | 'failed' | 'bridged' | 'completed' | 'busy' | 'no-answer' | 'declined' | 'canceled';

export interface Interaction {
  id: string;
  channel: Channel;
  from: string;
  to: string;
  status: InteractionStatus;
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
  /** Why an operator disabled it. */
  disabledReason?: string | null;
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
  /** Active sessions on this provider (refreshed every few seconds). */
  activeSessions?: number;
  /** Proxy numbers: held, enabled, and carrying at least one active session (a number carrying sessions still takes more). */
  pool?: { total: number; enabled: number; inUse: number };
  /** `cluster`: the state the cluster's leader decided; `replica`: this replica, cut off from the database, decides alone. */
  scope?: 'cluster' | 'replica';
  /** The replica that leads the breakers; null when none is known. */
  leader?: string | null;
  /** Fields a newer broker adds are kept as they come. */
  [field: string]: unknown;
}

export interface CpaasHealth {
  providers: ProviderHealth[];
  /** The replica that answered. */
  replica?: string;
  /** The replica that leads the breakers; null when none is known. */
  leader?: string | null;
  /** When the replica that answered started. */
  startedAt?: string;
  timestamp: string;
}

export interface BreakerTransition {
  /** Set on a persisted transition (`GET /v1/health/cpaas/history`); a live one from the stream has none yet. */
  id?: string;
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

/** `GET` and `PUT /v1/account/callback-url`. */
export interface AccountCallbackUrl {
  /** Where session events go when a session has no callbackUrl of its own; null when unset. */
  callbackUrl: string | null;
  /**
   * The account's webhook signing secret (`whsec_…`), present only when it was never shown before: keep
   * it, the broker never shows it again (`rotateWebhookSecret()` makes a new one).
   */
  webhookSecret?: string;
}

/** `GET /v1/account/webhook-secret`: never the secret itself. */
export interface WebhookSecretStatus {
  configured: boolean;
  /** Whether the current secret was already shown; false: `revealWebhookSecret()` shows it, once. */
  revealed: boolean;
  createdAt: string | null;
  /** Until then the previous secret signs too (24 h after a rotation). */
  previousSecretExpiresAt: string | null;
}

/** `POST /v1/account/webhook-secret/reveal`: the current secret, if it was never shown. */
export interface RevealedWebhookSecret {
  /** The current secret, shown this once. */
  secret: string;
  createdAt: string;
  /** The previous secret keeps signing until then; null if there is none. */
  previousSecretExpiresAt: string | null;
}

/** `POST /v1/account/webhook-secret/rotate`. */
export interface RotatedWebhookSecret {
  /** The new secret, shown this once. */
  secret: string;
  createdAt: string;
  /** The previous secret keeps signing until then; null if there was none. */
  previousSecretExpiresAt: string | null;
}

/** How a bridged call ended: `canceled`, the caller hung up before an answer; `failed`, the provider could not set up the bridge. */
export type CallAnswer = 'completed' | 'busy' | 'no-answer' | 'declined' | 'canceled' | 'failed';

/**
 * What the `data` of every webhook event carries, whatever its type (the event types extend it).
 * Order is not guaranteed on delivery: sort by `receivedAt` when order matters.
 */
export interface WebhookEventDataBase {
  /** When the broker learned of what the event tells (ISO 8601): a message's arrival, a session's create or close, a breaker transition. Not the send time. */
  receivedAt: string;
}

/** `data` of `session.created`, `session.closed` and `session.expired`: the session as the API returns it. */
export interface SessionEventData extends WebhookEventDataBase {
  session: Session;
}

/** `data` of `message.relayed`: an SMS was sent on to the other participant. */
export interface MessageRelayedData extends WebhookEventDataBase {
  sessionId: string;
  interactionId: string;
  /** The participant who wrote. */
  from: string;
  /** The participant it was relayed to. */
  to: string;
  /** Provider attempts it took (1 unless a relay was retried). */
  attempts: number;
}

/** `data` of `message.failed`: the relay gave up (the session ended before it could be sent). */
export interface MessageFailedData extends MessageRelayedData {
  reason: string;
}

/** `data` of `call.completed`: a bridged call ended. */
export interface CallCompletedData extends WebhookEventDataBase {
  sessionId: string;
  interactionId: string;
  from: string;
  to: string;
  answer: CallAnswer;
  durationSec: number;
}

/** `data` of `provider.state_changed` (sent to OPS_WEBHOOK_URL only). */
export interface ProviderStateChangedData extends BreakerTransition, WebhookEventDataBase {}

/** Each event type and its `data`. */
export interface EventDataByType {
  'session.created': SessionEventData;
  'session.closed': SessionEventData;
  'session.expired': SessionEventData;
  'message.relayed': MessageRelayedData;
  'message.failed': MessageFailedData;
  'call.completed': CallCompletedData;
  'provider.state_changed': ProviderStateChangedData;
}

export type EventType = keyof EventDataByType;
/** The events an account receives (all but `provider.state_changed`, which goes to operators). */
export type SessionEventType = Exclude<EventType, 'provider.state_changed'>;

/**
 * A webhook body, as the broker POSTs it: narrow on `type` to get the typed `data`.
 *
 * ```
 * if (event.type === 'message.relayed') event.data.interactionId;
 * ```
 */
export type WebhookEvent<T extends EventType = EventType> = {
  [K in T]: {
    /** The event's id (the same in `GET /v1/events`). */
    id: string;
    type: K;
    /** When it happened, ISO 8601. */
    timestamp: string;
    data: EventDataByType[K];
  };
}[T];

/** One delivery of an event, as `GET /v1/events` lists it. */
export interface DeliverySummary {
  /** The delivery id: the `webhook-id` header of every attempt. */
  id: string;
  url: string;
  status: DeliveryStatus;
  /** Attempts made so far. */
  attempts: number;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

/** `given_up`: not delivered within 72 h of the event; never sent again. */
export type DeliveryStatus = 'pending' | 'delivered' | 'given_up';

/** An event of `GET /v1/events`: the webhook body, plus its session and where it was delivered. */
export type BrokerEvent<T extends SessionEventType = SessionEventType> = {
  [K in T]: WebhookEvent<K> & {
    sessionId: string | null;
    /** Empty when neither the session nor the account had a callback URL. */
    deliveries: DeliverySummary[];
  };
}[T];

export interface ListEventsQuery {
  /** Only this session's events. */
  session?: string;
  /** Page size the broker is asked for. */
  limit?: number;
  /** Start from this cursor instead of the first page. */
  cursor?: string;
}

export interface EventPage {
  /** Newest first. */
  events: BrokerEvent[];
  nextCursor: string | null;
}

export interface DeliveryAttempt {
  number: number;
  startedAt: string;
  durationMs: number;
  /** The HTTP status the endpoint answered; null when it did not answer. */
  statusCode: number | null;
  error: string | null;
  delivered: boolean;
}

export interface DeliveryEndpointState {
  /** `down`: 3 failures in a row, one attempt every 5 minutes; `breaker-open`: the URL's breaker is open; `trial`: one attempt at a time. */
  condition: 'healthy' | 'down' | 'breaker-open' | 'trial';
  /** Nothing is sent to this URL before then. */
  blockedUntil: string | null;
  breakerState: BreakerState;
  lastError: string | null;
}

/** `GET /v1/deliveries/:id`: a delivery and each of its attempts. */
export interface Delivery {
  id: string;
  eventId: string;
  eventType: EventType;
  sessionId: string | null;
  url: string;
  status: DeliveryStatus;
  createdAt: string;
  nextAttemptAt: string | null;
  /** Given up if not delivered by then. */
  expiresAt: string;
  deliveredAt: string | null;
  givenUpAt: string | null;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
  /** The state of the URL, once something was sent to it. */
  endpoint: DeliveryEndpointState | null;
}
