/** The only place the CLI reads the environment: defaults for --url and --admin-token. */
export interface CliEnvironment {
  url?: string;
  adminToken?: string;
}

export function readCliEnvironment(env: NodeJS.ProcessEnv = process.env): CliEnvironment {
  return { url: env.BROKER_URL || undefined, adminToken: env.ADMIN_TOKEN || undefined };
}
