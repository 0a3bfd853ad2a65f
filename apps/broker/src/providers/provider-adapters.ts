/**
 * Builds each configured provider's adapter (docs/providers.md) and closes them at shutdown. Only the call
 * gateway (ProviderRegistry) reaches an adapter's calls; the rest of the app sees `webhooks()`, the
 * part of an adapter that never talks to the vendor (verify and parse its webhooks, answer them).
 */
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { createProvider, type CpaasProvider } from '@app/cpaas';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { UnknownProviderError } from './unknown-provider.error';

/** An adapter without its calls: what a webhook controller or the relay may use without the breaker. */
export type ProviderWebhooks = Omit<
  CpaasProvider,
  'bindProxy' | 'unbindProxy' | 'sendSms' | 'bridgeCall' | 'healthCheck' | 'numbers' | 'close'
>;

@Injectable()
export class ProviderAdapters implements OnApplicationShutdown {
  private readonly adapters = new Map<string, CpaasProvider>();
  /** The providers in routing order. */
  readonly names: readonly string[];

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    this.names = config.providers.map((p) => p.name);
    for (const providerConfig of config.providers) {
      // loadConfig requires it for PROVIDERS; the all-local start makes one before building the app.
      if (providerConfig.adapter === 'sim' && !config.simWebhookSecret)
        throw new Error('SIM_WEBHOOK_SECRET must be set for a sim provider');
      this.adapters.set(
        providerConfig.name,
        createProvider(providerConfig, {
          timeoutMs: config.providerCallTimeoutMs,
          // Only the sim adapter reads it; real vendors sign with their own credentials.
          webhookSecret: config.simWebhookSecret ?? '',
          publicUrl: config.publicUrl,
        }),
      );
    }
  }

  has(name: string): boolean {
    return this.adapters.has(name);
  }

  /** The adapter itself: for the call gateway and the router only (module-private, not exported). */
  get(name: string): CpaasProvider {
    const adapter = this.adapters.get(name);
    if (!adapter) throw new UnknownProviderError(name);
    return adapter;
  }

  webhooks(name: string): ProviderWebhooks {
    return this.get(name);
  }

  async onApplicationShutdown(): Promise<void> {
    for (const adapter of this.adapters.values()) await adapter.close();
  }
}
