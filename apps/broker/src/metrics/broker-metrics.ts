import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The broker's Prometheus metrics, in a registry of its own (one per app instance). */
@Injectable()
export class BrokerMetrics {
  readonly registry = new Registry();

  /** 0 CLOSED, 1 HALF_OPEN, 2 OPEN. */
  readonly breakerState = new Gauge({
    name: 'cpaas_breaker_state',
    help: 'Provider breaker state: 0 CLOSED, 1 HALF_OPEN, 2 OPEN',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  readonly providerDisabled = new Gauge({
    name: 'cpaas_provider_disabled',
    help: '1 while an operator has disabled the provider by hand',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  readonly breakerTransitions = new Counter({
    name: 'cpaas_breaker_transitions_total',
    help: 'Provider breaker state changes',
    labelNames: ['provider', 'from', 'to'] as const,
    registers: [this.registry],
  });

  /** outcome: success, or the failure cause (transport, timeout, http-5xx, rejected, invalid-number, ...). */
  readonly providerCalls = new Counter({
    name: 'cpaas_provider_calls_total',
    help: 'Provider API calls by operation and outcome class',
    labelNames: ['provider', 'operation', 'outcome', 'counts_against_provider'] as const,
    registers: [this.registry],
  });

  readonly providerCallDuration = new Histogram({
    name: 'cpaas_provider_call_duration_seconds',
    help: 'Provider API call latency',
    labelNames: ['provider', 'operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    registers: [this.registry],
  });

  readonly healthProbes = new Counter({
    name: 'cpaas_health_probes_total',
    help: 'Scheduled provider health checks by result',
    labelNames: ['provider', 'result'] as const,
    registers: [this.registry],
  });

  readonly sessionsCreated = new Counter({
    name: 'broker_sessions_created_total',
    help: 'Sessions created, by provider and whether the request failed over',
    labelNames: ['provider', 'failed_over'] as const,
    registers: [this.registry],
  });

  /** Every abuse limit's configured value (docs/security.md), so a dashboard shows what holds. */
  readonly limits = new Gauge({
    name: 'broker_limit',
    help: 'Configured abuse limits by name (durations in milliseconds)',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly streamsOpen = new Gauge({
    name: 'broker_sse_streams_open',
    help: 'Server-Sent Event streams open on this replica',
    registers: [this.registry],
  });

  readonly limitRefusals = new Counter({
    name: 'broker_limit_refusals_total',
    help: 'Requests refused by an abuse limit, by limit',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly sessionsFailed = new Counter({
    name: 'broker_sessions_failed_total',
    help: 'Creates that made no session after trying providers, by the problem type answered (providers-failed, pool-exhausted, ...)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** outcome: allowed (2xx), blocked (403), timeout (no answer within INTERCEPT_TIMEOUT_MS), error; decision: what was done. */
  readonly interceptRequests = new Counter({
    name: 'broker_intercept_requests_total',
    help: 'Intercept requests before a relay or a bridge, by outcome and by the decision taken (INTERCEPT_ON_ERROR decides on timeout and error)',
    labelNames: ['outcome', 'decision'] as const,
    registers: [this.registry],
  });

  readonly interceptDuration = new Histogram({
    name: 'broker_intercept_duration_seconds',
    help: 'Time an inbound text or call waited for its intercept URL, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    registers: [this.registry],
  });

  /**
   * How late a 100 ms timer fires: a stall of the event loop (GC, synchronous work) shows as one
   * observation of its length. Cumulative, so any number of scrapers can rate() it; prom-client's
   * default `nodejs_eventloop_lag_*` gauges (monitorEventLoopDelay, reset at each scrape) sit beside it.
   */
  readonly eventLoopDelay = new Histogram({
    name: 'broker_event_loop_delay_seconds',
    help: 'Event-loop delay: how late a 100 ms timer fired',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  /** Statement class: the verb and first table (`select api_keys`), or the name a statement carries in a leading comment. */
  readonly statementDuration = new Histogram({
    name: 'broker_db_statement_duration_seconds',
    help: 'Database statement time (after the connection is taken from the pool), by statement class',
    labelNames: ['statement'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly poolConnectionsOpened = new Counter({
    name: 'broker_db_pool_connections_opened_total',
    help: 'Connections the database pool has opened (each a backend fork and an authentication)',
    registers: [this.registry],
  });

  /** Set by whoever owns the pool; read at each scrape. */
  poolClientsSource?: () => { total: number; idle: number; waiting: number };

  readonly poolClients: Gauge<'state'> = new Gauge({
    name: 'broker_db_pool_clients',
    help: 'Database pool clients: total open, idle, and requests waiting for one',
    labelNames: ['state'] as const,
    registers: [this.registry],
    collect: () => {
      const clients = this.poolClientsSource?.();
      if (!clients) return;
      for (const state of ['total', 'idle', 'waiting'] as const) this.poolClients.set({ state }, clients[state]);
    },
  });

  /** A create's steps (reserve, bind, activate), so each one's share of a create is visible in production. */
  readonly createStepDuration = new Histogram({
    name: 'broker_session_create_step_seconds',
    help: 'Time of each step of POST /v1/sessions, per provider attempt',
    labelNames: ['step'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  /**
   * Every request by the route it matched (the pattern, `/v1/sessions/:id`, never the path: no id reaches a
   * label; `unmatched` for a 404 of no route), its method and its status code. Written when the response ends.
   */
  readonly httpRequests = new Counter({
    name: 'broker_http_requests_total',
    help: 'HTTP requests by route pattern, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });

  /** From the request's arrival to the end of its response; event streams (`/v1/health/cpaas/stream`) are left out. */
  readonly httpRequestDuration = new Histogram({
    name: 'broker_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern and method (event streams left out)',
    labelNames: ['route', 'method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** A create that skipped a provider because its breaker did not admit it (the create went on to the next one). */
  readonly sessionsRoutedAway = new Counter({
    name: 'broker_sessions_routed_away_total',
    help: 'Creates routed away from a provider by its breaker, by the state it was in (OPEN, HALF_OPEN)',
    labelNames: ['provider', 'state'] as const,
    registers: [this.registry],
  });

  /**
   * Session rescue (docs/design.md#session-rescue), counted by the breaker leader that did it: `from` the provider
   * left, `to` the one reached (`none` unless moved); outcome `moved`, `failed` (no number free: session.rescue_failed)
   * or `cancelled` (the outage or the session ended first, or the account turned rescue off).
   */
  readonly sessionRescues = new Counter({
    name: 'broker_session_rescues_total',
    help: 'Sessions a rescue moved off a provider that stayed OPEN, or could not move, by provider left, provider reached and outcome',
    labelNames: ['from', 'to', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly sessionRescuesPending = new Gauge({
    name: 'broker_session_rescues_pending',
    help: 'Session moves planned and not made yet, as the breaker leader last counted them (0 on the other replicas)',
    registers: [this.registry],
  });

  /** RESCUE_MOVES_PER_SECOND: the pace the leader keeps to, so a dashboard shows it beside the moves. */
  readonly sessionRescuePace = new Gauge({
    name: 'broker_session_rescue_max_moves_per_second',
    help: 'The most sessions a rescue moves per second (RESCUE_MOVES_PER_SECOND), cluster-wide',
    registers: [this.registry],
  });

  readonly webhookDeliveriesInFlight = new Gauge({
    name: 'broker_webhook_deliveries_in_flight',
    help: 'Webhook deliveries this replica is attempting now (sent, answer not yet read)',
    registers: [this.registry],
  });

  /** 1 on the replica that holds the breaker lease (the leader), else 0. */
  readonly breakerIsLeader = new Gauge({
    name: 'broker_breaker_is_leader',
    help: '1 while this replica holds the breaker leader lease',
    registers: [this.registry],
  });

  /** 0 while this replica knows no live leader: cut off from the database (deciding alone), or nobody holds the lease. */
  readonly breakerLeaderKnown = new Gauge({
    name: 'broker_breaker_leader_known',
    help: '1 while this replica follows (or is) a live breaker leader; 0 while it knows none and decides alone',
    registers: [this.registry],
  });

  readonly interactionTextsErased = new Counter({
    name: 'broker_interaction_texts_erased_total',
    help: 'Message bodies erased by INTERACTION_TEXT_RETENTION_DAYS (the interactions themselves are kept)',
    registers: [this.registry],
  });

  // The cluster's state, read from the database every METRICS_REFRESH_MS by ClusterGauges: every
  // replica reports the same figures (aggregate them with max, not sum).

  readonly databaseUp = new Gauge({
    name: 'broker_database_up',
    help: "1 when this replica's last read of the cluster gauges reached the database, else 0",
    registers: [this.registry],
  });

  readonly clusterGaugesReadAt = new Gauge({
    name: 'broker_cluster_gauges_read_timestamp_seconds',
    help: 'When the cluster gauges were last read from the database (Unix time)',
    registers: [this.registry],
  });

  readonly sessionsActive = new Gauge({
    name: 'broker_sessions_active',
    help: 'Active sessions, cluster-wide, by provider and channels (sms, voice, or voice+sms for a session with both)',
    labelNames: ['provider', 'channel'] as const,
    registers: [this.registry],
  });

  readonly poolNumbers = new Gauge({
    name: 'broker_pool_numbers',
    help: 'Proxy numbers in the pool by provider, enabled (given to new sessions) or disabled',
    labelNames: ['provider', 'state'] as const,
    registers: [this.registry],
  });

  readonly poolNumbersIdle = new Gauge({
    name: 'broker_pool_numbers_idle',
    help: 'Enabled proxy numbers carrying no active session, by provider',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  /**
   * Enabled numbers minus the most active sessions one participant holds on the provider: how many more
   * sessions the busiest participant can still get there (the pool rule puts a participant on a number once).
   */
  readonly poolHeadroom = new Gauge({
    name: 'broker_pool_headroom_numbers',
    help: "Enabled proxy numbers still free for the provider's busiest participant (0: someone can get no new session there)",
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveriesPending = new Gauge({
    name: 'broker_webhook_deliveries_pending',
    help: 'Webhook deliveries not yet delivered nor given up, cluster-wide, by kind (account, ops)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly webhookOldestPendingAge = new Gauge({
    name: 'broker_webhook_deliveries_oldest_pending_age_seconds',
    help: 'Age of the oldest pending webhook delivery, by kind (0 when none is pending)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  /** Given up 72 h after the event, by what the endpoint last answered (`reason`); rows are never deleted, so the count only grows. */
  readonly webhookDeliveriesGivenUp = new Counter({
    name: 'broker_webhook_deliveries_given_up_total',
    help: 'Webhook deliveries given up, cluster-wide, by kind and the last answer (never-attempted, no-response, http-4xx, http-5xx, http-other)',
    labelNames: ['kind', 'reason'] as const,
    registers: [this.registry],
  });

  readonly relaysPending = new Gauge({
    name: 'broker_relays_pending',
    help: 'Relayed texts not yet accepted by the provider (retried until the session ends), cluster-wide',
    registers: [this.registry],
  });

  readonly relayOldestPendingAge = new Gauge({
    name: 'broker_relays_oldest_pending_age_seconds',
    help: 'Age of the oldest pending relay (0 when none is pending)',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
