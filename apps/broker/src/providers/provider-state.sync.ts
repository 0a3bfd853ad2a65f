import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { BreakerStateStore, PROVIDER_STATE_CHANNEL } from './breaker-state.store';
import { ProviderRegistry } from './provider-registry';

const RECONNECT_MS = 2_000;

/**
 * Shares breaker state between replicas: each persisted change is announced with NOTIFY, and the
 * other replicas LISTEN, read the saved snapshot and adopt it. A lost connection is re-made; the
 * state is re-read then, so a missed notification costs nothing but time.
 */
@Injectable()
export class ProviderStateSync implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ProviderStateSync.name);
  private client: Client | null = null;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly store: BreakerStateStore,
    private readonly registry: ProviderRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: (this.dataSource.options as { url: string }).url,
      application_name: 'session-broker-listen',
    });
    client.on('error', () => this.scheduleReconnect(client));
    client.on('end', () => this.scheduleReconnect(client));
    client.on('notification', (message) => void this.onNotification(message.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${PROVIDER_STATE_CHANNEL}`);
      this.client = client;
    } catch (error) {
      this.logger.warn(`cannot listen for other replicas' breaker changes yet: ${(error as Error).message}`);
      this.scheduleReconnect(client);
    }
  }

  private scheduleReconnect(client: Client): void {
    if (this.stopped || this.reconnectTimer) return;
    if (this.client === client) this.client = null;
    void client.end().catch(() => undefined);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect().then(() => this.resync());
    }, RECONNECT_MS);
  }

  private async onNotification(payload: string | undefined): Promise<void> {
    try {
      const { provider, origin } = JSON.parse(payload ?? '{}') as { provider?: string; origin?: string };
      if (!provider || origin === this.store.origin || !this.registry.has(provider)) return;
      const saved = await this.store.load(provider);
      if (saved) this.registry.adopt(provider, saved.snapshot, saved.disabled, saved.disabledReason);
    } catch (error) {
      this.logger.warn({ err: error }, 'could not adopt a breaker change from another replica');
    }
  }

  /** After a reconnect, anything missed meanwhile is read back. */
  private async resync(): Promise<void> {
    if (!this.client) return;
    const saved = await this.store.loadAll().catch(() => new Map());
    for (const [provider, state] of saved)
      if (this.registry.has(provider)) this.registry.adopt(provider, state.snapshot, state.disabled, state.disabledReason);
  }
}
