import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, PoolClient } from 'pg';
import type { DataSource, EntitySubscriberInterface } from 'typeorm';
import { driverPool, type PreparedStatement } from '@app/database';
import type { AfterQueryEvent } from 'typeorm/subscriber/event/QueryEvent.js';
import type { Subscription } from 'rxjs';
import { BROKER_CONFIG, type BrokerConfig } from './config';
import { BrokerMetrics } from './metrics/broker-metrics';
import { ListenClient } from './database/listen-client';
import { StatementClasses } from './database/statement-class';

/**
 * The database pool seen from the outside: each statement's time by class, the connections the pool
 * opens and loses, the pool's clients at scrape time, and the LISTEN connection's state. At start it
 * opens every connection of the pool at once (the pool keeps them, see `brokerDataSourceOptions`), so
 * no request pays for a connection.
 *
 * A pooled connection whose server went away (a failover, a restart) is never used again: an idle one
 * fails with an `error` on the pool, which drops it (counted and logged here), and one whose socket fails
 * while a statement holds it is released with the error, which drops it too (TypeORM's query runner, pg-pool).
 * The create path's statements (PoolStatements) also drop a connection its server ended with a FATAL answer
 * before the socket closed, which TypeORM would hand to the next statement. The pool opens new ones on demand,
 * through HAProxy to whichever node leads now.
 */
@Injectable()
export class DatabaseObserver implements EntitySubscriberInterface, OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DatabaseObserver.name);
  private readonly classes = new StatementClasses();
  private listenState: Subscription | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly metrics: BrokerMetrics,
    private readonly listener: ListenClient,
  ) {}

  onModuleInit(): void {
    this.dataSource.subscribers.push(this);
    const pool = this.pool();
    pool.on('connect', () => this.metrics.poolConnectionsOpened.inc());
    pool.on('error', (error) => {
      this.metrics.poolConnectionsLost.inc();
      this.logger.warn(`an idle database connection failed (${error.message}); the pool drops it and opens another when needed`);
    });
    let upBefore = false;
    this.listenState = this.listener.connected$.subscribe((up) => {
      this.metrics.listenConnected.set(up ? 1 : 0);
      if (up && upBefore) this.metrics.listenReconnects.inc();
      upBefore ||= up;
    });
    // Also count the connections TypeORM opened while initialising (one, released at once).
    this.metrics.poolConnectionsOpened.inc(pool.totalCount);
    this.metrics.poolClientsSource = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
  }

  async onApplicationBootstrap(): Promise<void> {
    const pool = this.pool();
    const clients: PoolClient[] = [];
    try {
      // All at once: the pool opens one connection per waiting request, up to its size.
      const opened = await Promise.allSettled(Array.from({ length: this.config.databasePoolSize }, () => pool.connect()));
      for (const result of opened) if (result.status === 'fulfilled') clients.push(result.value);
      const failed = opened.length - clients.length;
      if (failed > 0)
        this.logger.warn(`opened ${clients.length} of ${opened.length} database connections at start; the rest open on demand`);
    } finally {
      for (const client of clients) client.release();
    }
  }

  onApplicationShutdown(): void {
    this.listenState?.unsubscribe();
  }

  afterQuery(event: AfterQueryEvent): void {
    if (event.executionTime === undefined) return;
    this.statementTimed(event.query, event.executionTime);
  }

  /** A statement's time in `broker_db_statement_duration_seconds`, under its class: TypeORM's (afterQuery) and PoolStatements'. */
  statementTimed(statement: string | PreparedStatement, ms: number): void {
    this.metrics.statementDuration.observe({ statement: this.classes.of(String(statement)) }, ms / 1000);
  }

  private pool(): Pool {
    return driverPool(this.dataSource);
  }
}
