import { credential, optionalCredential, type AdapterName, type ProviderCredentials } from './credentials';
import { UnknownAdapterError } from './errors';
import type { Clock } from '@app/clock';
import type { CpaasProvider } from './provider';
import { SimProviderAdapter } from './sim/sim-provider.adapter';
import { TwilioProviderAdapter } from './twilio/twilio-provider.adapter';
import { VonageProviderAdapter } from './vonage/vonage-provider.adapter';
import { AfricasTalkingProviderAdapter } from './africastalking/africastalking-provider.adapter';
import { InfobipProviderAdapter } from './infobip/infobip-provider.adapter';

/** Where a provider is reached and which adapter speaks to it (the broker's `PROVIDERS` entries). */
export interface CpaasProviderConfig {
  name: string;
  adapter: AdapterName;
  /** The simulator's URL (sim, required); for a vendor, an override of its API base (tests, regional edges). */
  baseUrl?: string;
  /** From `PROVIDER_<NAME>_*`, keyed as `ADAPTER_CREDENTIALS` names them; secrets as `Secret`. */
  credentials?: ProviderCredentials;
}

export interface CpaasProviderOptions {
  /** `PROVIDER_CALL_TIMEOUT_MS`: every provider call is aborted after this long. */
  timeoutMs: number;
  /** Secret the simulator signs its webhooks with. */
  webhookSecret: string;
  /** `PUBLIC_URL`: where the vendor reaches the broker (status callbacks, dial actions); required for vendor adapters. */
  publicUrl?: string;
  clock?: Clock;
}

export function createProvider(config: CpaasProviderConfig, options: CpaasProviderOptions): CpaasProvider {
  switch (config.adapter) {
    case 'sim':
      if (!config.baseUrl) throw new Error(`provider "${config.name}": the sim adapter needs the simulator's URL`);
      return new SimProviderAdapter({
        name: config.name,
        baseUrl: config.baseUrl,
        timeoutMs: options.timeoutMs,
        webhookSecret: options.webhookSecret,
        clock: options.clock,
      });
    case 'twilio':
      if (!options.publicUrl) throw new Error(`provider "${config.name}": the twilio adapter needs PUBLIC_URL`);
      return new TwilioProviderAdapter({
        name: config.name,
        accountSid: credential(config.credentials ?? {}, 'accountSid'),
        authToken: credential(config.credentials ?? {}, 'authToken'),
        publicUrl: options.publicUrl,
        baseUrl: config.baseUrl,
        timeoutMs: options.timeoutMs,
        clock: options.clock,
      });
    case 'vonage': {
      const credentials = config.credentials ?? {};
      if (!options.publicUrl) throw new Error(`provider "${config.name}": the vonage adapter needs PUBLIC_URL`);
      return new VonageProviderAdapter({
        name: config.name,
        baseUrl: config.baseUrl,
        apiKey: credential(credentials, 'apiKey'),
        apiSecret: credential(credentials, 'apiSecret'),
        applicationId: credential(credentials, 'applicationId'),
        privateKey: optionalCredential(credentials, 'privateKey'),
        signatureSecret: credential(credentials, 'signatureSecret'),
        publicUrl: options.publicUrl,
        timeoutMs: options.timeoutMs,
        clock: options.clock,
      });
    }
    case 'africastalking': {
      const credentials = config.credentials ?? {};
      if (!options.publicUrl) throw new Error(`provider "${config.name}": the africastalking adapter needs PUBLIC_URL`);
      return new AfricasTalkingProviderAdapter({
        name: config.name,
        username: credential(credentials, 'username'),
        apiKey: credential(credentials, 'apiKey'),
        webhookToken: credential(credentials, 'webhookToken'),
        publicUrl: options.publicUrl,
        baseUrl: config.baseUrl,
        timeoutMs: options.timeoutMs,
        clock: options.clock,
      });
    }
    case 'infobip': {
      const credentials = config.credentials ?? {};
      if (!options.publicUrl) throw new Error(`provider "${config.name}": the infobip adapter needs PUBLIC_URL`);
      return new InfobipProviderAdapter({
        name: config.name,
        apiKey: credential(credentials, 'apiKey'),
        webhookToken: credential(credentials, 'webhookToken'),
        publicUrl: options.publicUrl,
        baseUrl: config.baseUrl,
        timeoutMs: options.timeoutMs,
        clock: options.clock,
      });
    }
    default:
      throw new UnknownAdapterError(String(config.adapter));
  }
}
