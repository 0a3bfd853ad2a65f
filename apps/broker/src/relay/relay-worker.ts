import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { JOB_LOCKS, runExclusive } from '../database/exclusive';
import { RelayService } from './relay.service';

const INTERVAL_NAME = 'relay-retries';

/** Every RELAY_RETRY_INTERVAL_MS, one replica retries the relays that are due. */
@Injectable()
export class RelayWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RelayWorker.name);
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly relay: RelayService,
    private readonly schedule: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule.addInterval(
      INTERVAL_NAME,
      setInterval(() => void this.run(), this.config.sessions.relayRetryIntervalMs),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.schedule.doesExist('interval', INTERVAL_NAME)) this.schedule.deleteInterval(INTERVAL_NAME);
    await this.running;
  }

  async run(): Promise<void> {
    if (this.stopped || this.running) return this.running ?? undefined;
    this.running = runExclusive(this.dataSource, JOB_LOCKS.relayRetries, async () => {
      while (!this.stopped && (await this.relay.retryDue()) > 0);
    })
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error({ err: error }, 'relay retry pass failed; next pass retries'))
      .finally(() => (this.running = null));
    return this.running;
  }
}
