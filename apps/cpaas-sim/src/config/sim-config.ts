import type { Clock } from '@app/clock';

/** The simulator's settings; read from the environment only here. */
export interface SimulatorConfig {
  port: number;
  /** Where simulated providers deliver inbound webhooks (the broker's base URL). */
  brokerUrl: string;
  webhookSecret: string;
  /**
   * Whether providers post delivery receipts (`message.delivered` after an SMS, `call.completed`
   * after an API call) to the broker. Per provider at run time; this is the starting value.
   * Off by default, to keep tests quiet.
   */
  statusWebhooks?: boolean;
  /** How long a webhook to the broker may take (default 10 000 ms). */
  webhookTimeoutMs?: number;
  /** How many records each provider's call log keeps, newest last (default 10 000). */
  callLogLimit?: number;
  /** Draws in [0, 1) for the `flaky` fault mode (default Math.random); tests inject their own. */
  random?: () => number;
  /** Timestamps of records and webhooks (default the system clock). */
  clock?: Clock;
  /** `SIM_CONTROL_ALLOW_REMOTE`: the `/_sim` control routes answer any client, not only loopback (default false). */
  controlAllowRemote?: boolean;
}

export function loadSimulatorConfig(env: Record<string, string | undefined> = process.env): SimulatorConfig {
  const port = Number(env.SIM_PORT ?? 4010);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`invalid configuration: SIM_PORT must be an integer between 0 and 65535 (got "${env.SIM_PORT}")`);
  }
  const brokerUrl = (env.BROKER_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  if (!/^https?:\/\/\S+$/.test(brokerUrl))
    throw new Error(`invalid configuration: BROKER_URL must be an http(s) URL (got "${env.BROKER_URL}")`);
  const statusWebhooks = env.SIM_STATUS_WEBHOOKS ?? 'false';
  if (statusWebhooks !== 'true' && statusWebhooks !== 'false')
    throw new Error(`invalid configuration: SIM_STATUS_WEBHOOKS must be true or false (got "${statusWebhooks}")`);
  // No built-in secret: one published in the code would let anyone sign an inbound webhook.
  const webhookSecret = env.SIM_WEBHOOK_SECRET?.trim() ?? '';
  if (webhookSecret.length < 16)
    throw new Error('invalid configuration: SIM_WEBHOOK_SECRET must be set to at least 16 characters (the broker checks the same secret)');
  const controlAllowRemote = env.SIM_CONTROL_ALLOW_REMOTE ?? 'false';
  if (controlAllowRemote !== 'true' && controlAllowRemote !== 'false')
    throw new Error(`invalid configuration: SIM_CONTROL_ALLOW_REMOTE must be true or false (got "${controlAllowRemote}")`);
  return { port, brokerUrl, webhookSecret, statusWebhooks: statusWebhooks === 'true', controlAllowRemote: controlAllowRemote === 'true' };
}
