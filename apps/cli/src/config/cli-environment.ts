/** The only place the CLI reads the environment: defaults for --url, --admin-token and --api-key. */
export interface CliEnvironment {
  url?: string;
  adminToken?: string;
  /** An account's API key, for the `sessions` commands. */
  apiKey?: string;
}

export function readCliEnvironment(env: NodeJS.ProcessEnv = process.env): CliEnvironment {
  return { url: env.BROKER_URL || undefined, adminToken: env.ADMIN_TOKEN || undefined, apiKey: env.BROKER_API_KEY || undefined };
}
