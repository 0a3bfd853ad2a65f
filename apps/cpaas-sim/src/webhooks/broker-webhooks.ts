import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { systemClock, type Clock } from '@app/clock';
import { readLimited, signSimWebhook } from '@app/cpaas';
import { Agent } from 'undici';
import type { SimulatorConfig } from '../config/sim-config';
import { SIM_CONFIG } from '../sim-config.token';

export type BrokerWebhookPath = 'inbound/sms' | 'inbound/voice' | 'status';

/** The broker's answer to a webhook, as it came. */
export interface BrokerAnswer {
  status: number;
  contentType?: string;
  body: string;
}

/** Largest broker answer relayed back to whoever triggered an inbound event. */
const MAX_ANSWER_BYTES = 256 * 1024;

/**
 * Posts signed webhooks to the broker, as a real provider does: JSON to
 * `${brokerUrl}/v1/providers/:name/<path>`, signed over the timestamp, the provider, the route and
 * the body (libs/cpaas `signSimWebhook`).
 * `brokerUrl` is read at each send, so a test may set it once the broker listens.
 */
@Injectable()
export class BrokerWebhooks implements OnModuleDestroy {
  private readonly logger = new Logger('CpaasSimulator');
  private readonly agent = new Agent({ keepAliveTimeout: 4_000, connections: 64 });
  private readonly shutdown = new AbortController();
  private readonly clock: Clock;

  constructor(@Inject(SIM_CONFIG) private readonly config: SimulatorConfig) {
    this.clock = config.clock ?? systemClock;
  }

  /** Throws when the broker cannot be reached or does not answer in time. */
  async post(provider: string, path: BrokerWebhookPath, payload: object): Promise<BrokerAnswer> {
    const url = new URL(`${this.config.brokerUrl.replace(/\/+$/, '')}/v1/providers/${encodeURIComponent(provider)}/${path}`);
    const rawBody = JSON.stringify(payload);
    const response = await this.agent.request({
      origin: url.origin,
      path: url.pathname,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'cpaas-sim',
        ...signSimWebhook(
          this.config.webhookSecret,
          { provider, method: 'POST', path: url.pathname },
          rawBody,
          Math.floor(this.clock.now() / 1000),
        ),
      },
      body: rawBody,
      signal: AbortSignal.any([this.shutdown.signal, AbortSignal.timeout(this.config.webhookTimeoutMs ?? 10_000)]),
    });
    const contentType = response.headers['content-type'];
    return {
      status: response.statusCode,
      contentType: Array.isArray(contentType) ? contentType[0] : contentType,
      body: await readLimited(response.body, MAX_ANSWER_BYTES),
    };
  }

  /** A receipt nobody waits for: failures are logged at debug level and otherwise ignored. */
  postInBackground(provider: string, path: BrokerWebhookPath, payload: object): void {
    this.post(provider, path, payload).then(
      (answer) => {
        if (answer.status >= 300) this.logger.debug(`${provider}: broker answered ${answer.status} to ${path} webhook`);
      },
      (error: unknown) => {
        if (!this.shutdown.signal.aborted) this.logger.debug(`${provider}: ${path} webhook failed: ${(error as Error).message}`);
      },
    );
  }

  async onModuleDestroy(): Promise<void> {
    this.shutdown.abort();
    await this.agent.destroy();
  }
}
