/**
 * Credentials this repository has published as examples: in its docs and docker-compose.yml, today or in an
 * earlier version (the compose file's defaults until issue #29). Anyone can read them, so the broker refuses
 * to start with one as a credential of its own (docs/security.md#secrets). `published-examples.spec.ts`
 * fails when the docs or the compose file show a literal credential that this list does not hold.
 */
export const PUBLISHED_EXAMPLE_CREDENTIALS: ReadonlySet<string> = new Set([
  // docker-compose.yml's defaults for BROKER_API_KEY and ADMIN_TOKEN, and docs/operations.md's example session.
  'dev-key-change-me-0000',
  'dev-admin-token-change-me',
  // docker-compose.yml's PostgreSQL password, in its DATABASE_URL.
  'broker',
]);

/** The broker's own credentials, read from the environment, that must not be a published example. */
export const CREDENTIAL_VARIABLES = [
  'BROKER_API_KEY',
  'ADMIN_TOKEN',
  'SIM_WEBHOOK_SECRET',
  'OPS_WEBHOOK_SECRET',
  'METRICS_TOKEN',
  'DATABASE_URL',
] as const;

/**
 * One line per credential variable whose value (a key of BROKER_API_KEY's list, the password in
 * DATABASE_URL) is a published example; the value itself is never repeated.
 */
export function publishedExampleProblems(env: Partial<Record<(typeof CREDENTIAL_VARIABLES)[number], string>>): string[] {
  const problems: string[] = [];
  for (const variable of CREDENTIAL_VARIABLES) {
    const value = env[variable];
    if (value === undefined) continue;
    const secrets = variable === 'BROKER_API_KEY' ? value.split(',') : variable === 'DATABASE_URL' ? [databasePassword(value)] : [value];
    if (secrets.some((secret) => secret !== undefined && PUBLISHED_EXAMPLE_CREDENTIALS.has(secret)))
      problems.push(
        `${variable} ${variable === 'DATABASE_URL' ? 'has a password' : variable === 'BROKER_API_KEY' ? 'holds a key' : 'is a value'} published as an example in this repository's docs or docker-compose.yml; anyone can read it: choose your own (e.g. openssl rand -hex 24)`,
      );
  }
  return problems;
}

function databasePassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}
