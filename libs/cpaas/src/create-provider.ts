import { UnknownAdapterError } from './errors';
import type { Clock, CpaasProvider } from './provider';
import { SimProviderAdapter } from './sim/sim-provider.adapter';

/** Where a provider is reached and which adapter speaks to it (the broker's `PROVIDERS` entries). */
export interface CpaasProviderConfig {
  name: string;
  adapter: 'sim';
  baseUrl: string;
}

export interface CpaasProviderOptions {
  /** `PROVIDER_CALL_TIMEOUT_MS`: every provider call is aborted after this long. */
  timeoutMs: number;
  /** Secret the provider signs its webhooks with. */
  webhookSecret: string;
  clock?: Clock;
}

export function createProvider(config: CpaasProviderConfig, options: CpaasProviderOptions): CpaasProvider {
  switch (config.adapter) {
    case 'sim':
      return new SimProviderAdapter({ name: config.name, baseUrl: config.baseUrl, ...options });
    default:
      throw new UnknownAdapterError(String(config.adapter));
  }
}
