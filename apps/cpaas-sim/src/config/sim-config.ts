/** The simulator's settings; read from the environment only here. */
export interface SimulatorConfig {
  port: number;
  /** Where simulated providers deliver inbound webhooks (the broker's base URL). */
  brokerUrl: string;
  webhookSecret: string;
}

export function loadSimulatorConfig(env: Record<string, string | undefined> = process.env): SimulatorConfig {
  const port = Number(env.SIM_PORT ?? 4010);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`invalid configuration: SIM_PORT must be an integer between 0 and 65535 (got "${env.SIM_PORT}")`);
  }
  const brokerUrl = (env.BROKER_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  if (!/^https?:\/\/\S+$/.test(brokerUrl))
    throw new Error(`invalid configuration: BROKER_URL must be an http(s) URL (got "${env.BROKER_URL}")`);
  return { port, brokerUrl, webhookSecret: env.SIM_WEBHOOK_SECRET ?? 'sim-dev-webhook-secret' };
}
