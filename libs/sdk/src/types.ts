/** The broker's JSON shapes, as the HTTP API (v1) sends and takes them. Timestamps are ISO 8601 strings. */

export type Channel = 'sms' | 'voice';
export type SessionStatus = 'active' | 'closed' | 'expired';
export type BreakerState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

export interface Participant {
  /** E.164, like `+2348030000001`. */
  number: string;
}

/** Why a session expired: its `expiresAt` (ttlSeconds), or `idleTtlSeconds` without an interaction. */
export type ExpiredReason = 'ttl' | 'idle';

/** `prefer-sticky`: the proxy number the first participant had in their most recent session, when the pool rule allows. */
export type NumberSelection = 'any' | 'prefer-sticky';

export interface Session {
  id: string;
  /** What the session carries, voice first: calls, texts or both, through its one proxy number. */
  channels: Channel[];
  /** @deprecated The session's one channel; null for a session with both. Read `channels`. */
  channel: Channel | null;
  status: SessionStatus;
  /** Set once it expired. */
  expiredReason: ExpiredReason | null;
  /** The provider the session is on: the one it was created on, unless a rescue moved it (`numberHistory`). */
  provider: string;
  /** The masked number both participants see, E.164. */
  proxyNumber: string;
  /** Every proxy number the session has had, oldest first; the last is its current one. More than one only after a rescue. */
  numberHistory: SessionNumber[];
  /** The two participants, in the order they were given. */
  participants: Participant[];
  createdAt: string;
  /** The hard limit: it ends then, however recent its last interaction. */
  expiresAt: string;
  /** It expires this long after its last interaction (or its creation); null: only expiresAt ends it. */
  idleTtlSeconds: number | null;
  /** Its last interaction; null while it has none. */
  lastInteractionAt: string | null;
  uniqueName: string | null;
  callbackUrl: string | null;
  /** Its own intercept URL; null: the account's, if any. */
  interceptUrl: string | null;
  /** What was given at creation; `{}` when nothing was. */
  metadata: Record<string, unknown>;
}

/** One proxy number a session has had (`Session.numberHistory`). */
export interface SessionNumber {
  provider: string;
  proxyNumber: string;
  /** When the session got it: its creation, or the rescue that moved it there. */
  since: string;
  /** When a rescue moved the session off it; null for the current one. */
  until: string | null;
}

/** `channels` (one or both), or the older `channel` (one). */
export type SessionChannelsInput = { channels: readonly Channel[]; channel?: Channel } | { channel: Channel; channels?: undefined };

export type CreateSessionInput = SessionChannelsInput & {
  /** Exactly two distinct E.164 numbers (a list built elsewhere is fine; the broker checks the count). */
  participants: readonly Participant[];
  /** Default 3600, at most 7 days. */
  ttlSeconds?: number;
  /** Expire after this long without an interaction (60 s to 7 days); `expiresAt` stays the hard limit. */
  idleTtlSeconds?: number;
  /** Unique among the account's live sessions (409 on a second); `listSessions({ uniqueName })` finds it. */
  uniqueName?: string;
  callbackUrl?: string;
  /** Asked before each relay and bridge of this session instead of the account's intercept URL. */
  interceptUrl?: string;
  numberSelection?: NumberSelection;
  metadata?: Record<string, unknown>;
};

/** `POST /v1/sessions/:id/messages`: a text from the proxy number to one participant. */
export interface SendMessageInput {
  /** One of the session's participants. */
  to: string;
  /** 1 to 1 600 characters. */
  text: string;
}

export interface ListSessionsQuery {
  status?: SessionStatus;
  /** Only the sessions with this uniqueName. */
  uniqueName?: string;
  /** Page size the broker is asked for. */
  limit?: number;
  /** Start from this cursor instead of the first page. */
  cursor?: string;
}

export interface SessionPage {
  sessions: Session[];
  nextCursor: string | null;
}

/**
 * `undelivered`: the provider accepted a relayed text and later reported it undelivered; `canceled`: a bridged call the caller
 * hung up before it was answered; `blocked`: the intercept refused it (not relayed, not bridged); `out-of-session`: it came
 * on a channel the session does not have.
 */
export type InteractionStatus =
  | 'pending'
  | 'relayed'
  | 'delivered'
  | 'undelivered'
  | 'failed'
  | 'bridged'
  | 'completed'
  | 'busy'
  | 'no-answer'
  | 'declined'
  | 'canceled'
  | 'blocked'
  | 'out-of-session';

export interface Interaction {
  id: string;
  channel: Channel;
  /** Who wrote or called; the proxy number for a message the app sent. */
  from: string;
  to: string;
  status: InteractionStatus;
  createdAt: string;
}

/** `GET`, `PUT` and `DELETE /v1/account/rescue`: whether the account's sessions leave a provider that stays down. */
export interface AccountRescue {
  enabled: boolean;
  /** Seconds a provider's breaker must have been OPEN before its sessions move; null while rescue is off. */
  afterSeconds: number | null;
  /** Texted to each participant from the new number after a move (sessions with texts); null: none. */
  notice: string | null;
}

/** `PUT /v1/account/rescue`. */
export interface SetRescueInput {
  /** 0 to 604 800 (7 days); 0: as soon as the breaker opens. */
  afterSeconds: number;
  /** 1 to 1 600 characters; null or left out: no text. */
  notice?: string | null;
}

/** `GET` and `PUT /v1/account/intercept-url`. */
export interface AccountInterceptUrl {
  /** Asked before each relay and bridge of a session that names none of its own; null when unset. */
  interceptUrl: string | null;
}

/**
 * What the broker POSTs to an intercept URL before it relays a text or bridges a call, signed like every
 * webhook (`constructInterceptRequest` verifies and reads it). Answer 2xx to let it through, 403 to block it.
 */
export interface InterceptRequest {
  /** The interaction's id: the same if the provider sends its webhook again. */
  id: string;
  type: 'interaction.intercept';
  timestamp: string;
  data: {
    session: Session;
    interaction: { id: string; channel: Channel; from: string; to: string; /** A text's body. */ text?: string; createdAt: string };
  };
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
  /** HALF_OPEN: the probes of real traffic (binds, sends, bridged calls) the close gate counts; health checks alone never close. */
  trafficProbes?: number;
  /** Active sessions on this provider (refreshed every few seconds). */
  activeSessions?: number;
  /** The same, by the channels the sessions carry (`voice`, `sms`, `voice+sms`). */
  activeSessionsByChannels?: Record<string, number>;
  /** Proxy numbers: held, enabled, carrying at least one active session (a number carrying sessions still takes more); the enabled ones that carry voice, sms. */
  pool?: { total: number; enabled: number; inUse: number; voice: number; sms: number };
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

/** `GET` and `PUT /v1/account/default-country`. */
export interface AccountDefaultCountry {
  /** ISO 3166 alpha-2 (`NG`): participant numbers written without `+` are read as this country's; null: E.164 only. */
  country: string | null;
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

/** `data` of `interaction.blocked`: the intercept answered 403, or failed with INTERCEPT_ON_ERROR=block; nothing was relayed or bridged. */
export interface InteractionBlockedData extends WebhookEventDataBase {
  sessionId: string;
  interactionId: string;
  channel: Channel;
  from: string;
  to: string;
  /** `blocked`: the intercept answered 403; `timeout` or `error`: INTERCEPT_ON_ERROR=block decided. */
  outcome: 'blocked' | 'timeout' | 'error';
  reason: string;
}

/**
 * `data` of `interaction.out_of_session`: a text or call to one of your numbers that reached no relay. `no-session`:
 * a sender without a live session on a number dedicated to your account (sessionId null); `channel-not-in-session`:
 * a participant on a channel their session does not have; `session-rebound`: a participant on the number a rescue
 * moved their session off (`movedTo` says where it is now).
 */
export interface InteractionOutOfSessionData extends WebhookEventDataBase {
  reason: 'no-session' | 'channel-not-in-session' | 'session-rebound';
  sessionId: string | null;
  interactionId: string | null;
  channel: Channel;
  from: string;
  proxyNumber: string;
  provider: string;
  /** A text's body. */
  text?: string;
  /** `session-rebound`: the session's number now. */
  movedTo?: ProviderNumber;
}

/** A proxy number on a provider. */
export interface ProviderNumber {
  provider: string;
  proxyNumber: string;
}

/** `data` of `session.rebound`: a rescue moved the session off a provider that stayed down; same id, new number. */
export interface SessionReboundData extends WebhookEventDataBase {
  /** The session as it is now, on its new number. */
  session: Session;
  from: ProviderNumber;
  to: ProviderNumber;
  /** Why: the provider left, since when it has been OPEN, and what tripped it. */
  reason: string;
  /** When the provider left opened (names the outage: a session moves at most once per outage). */
  outageStartedAt: string;
}

/** `data` of `session.rescue_failed`: no provider that admitted the session had a number free for it; it stays where it is. */
export interface SessionRescueFailedData extends WebhookEventDataBase {
  session: Session;
  from: ProviderNumber;
  reason: string;
  /** Each provider tried, and what it answered (`pool exhausted: …`, `participant limit: …`, a refusal). */
  attempts: Array<{ provider: string; outcome: string }>;
  outageStartedAt: string;
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
  'interaction.blocked': InteractionBlockedData;
  'interaction.out_of_session': InteractionOutOfSessionData;
  'session.rebound': SessionReboundData;
  'session.rescue_failed': SessionRescueFailedData;
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
