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

  /** A database failover, seen from one replica (docs/operations.md#past-one-database-server). */
  readonly poolConnectionsLost = new Counter({
    name: 'broker_db_pool_connections_lost_total',
    help: 'Idle pooled database connections that failed (the server went away); the pool drops each and opens another on demand',
    registers: [this.registry],
  });

  readonly listenConnected = new Gauge({
    name: 'broker_db_listen_connected',
    help: '1 while the LISTEN connection is up and listens to every channel (breaker state, webhook wakes, Idempotency-Key waiters, destinations), else 0',
    registers: [this.registry],
  });

  readonly listenReconnects = new Counter({
    name: 'broker_db_listen_reconnects_total',
    help: 'Times the LISTEN connection came back after being lost',
    registers: [this.registry],
  });

  /** A create's steps (reserve, bind, activate), so each one's share of a create is visible in production. */
  readonly createStepDuration = new Histogram({
    name: 'broker_session_create_step_seconds',
    help: 'Time of each step of POST /v1/sessions, per provider attempt',
    labelNames: ['step'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
