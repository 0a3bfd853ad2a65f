/** The only place the CLI reads the environment: defaults for --url, --admin-token and --api-key. */
export interface CliEnvironment {
  url?: string;
  adminToken?: string;
  /** An account's API key, for the `sessions` commands. */
  apiKey?: string;
}

/**
 * `BROKER_URL`, else the broker `npm start` runs with the same `PORT` (and `HOST`, when it names one
 * address) in this shell, so a CLI started beside it needs nothing more; else the CLI's own default.
 */
export function readCliEnvironment(env: NodeJS.ProcessEnv = process.env): CliEnvironment {
  return {
    url: env.BROKER_URL || localBroker(env.PORT, env.HOST),
    adminToken: env.ADMIN_TOKEN || undefined,
    apiKey: env.BROKER_API_KEY || undefined,
  };
}

function localBroker(port: string | undefined, host: string | undefined): string | undefined {
  if (!port || !/^\d{1,5}$/.test(port.trim())) return undefined;
  const given = host?.trim();
  // A wildcard address listens on loopback too.
  const address = !given || given === '0.0.0.0' || given === '::' ? '127.0.0.1' : given;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port.trim()}`;
}
