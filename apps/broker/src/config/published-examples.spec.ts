/**
 * No credential anyone can read in this repository opens the broker (issue #29): docker-compose.yml asks for
 * every credential and publishes its ports on loopback only, and the broker refuses to start with a
 * credential that the docs or the compose file show (or showed) as an example.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ConfigError, loadConfig } from './load-config';
import { CREDENTIAL_VARIABLES, PUBLISHED_EXAMPLE_CREDENTIALS } from './published-examples';

const ROOT = process.cwd(); // Jest runs from the repository root
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** A variable whose value is a credential: a key, token, secret or password. */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD)$/;
/** `${NAME:?message}`: compose refuses to start without it, and there is no default. */
const REQUIRED = /^\$\{([A-Z][A-Z0-9_]*):\?[^}]+\}$/;

interface Service {
  ports?: Array<string | number | { host_ip?: string; published?: string | number }>;
  environment?: Record<string, string | number | boolean | null> | string[];
}

function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((entry) => [entry.split('=')[0], entry.slice(entry.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, String(value)]));
}

/** Where a published port listens on the host: `[host:]published:target`, `published` alone, or the long form. */
function hostAddressOf(port: string | number | { host_ip?: string }): string {
  if (typeof port === 'object') return port.host_ip ?? '0.0.0.0';
  const parts = String(port).split(':');
  if (parts.length <= 2) return '0.0.0.0';
  return parts
    .slice(0, -2)
    .join(':')
    .replace(/^\[|\]$/g, '');
}

/** What a compose file does that publishes a credential or an open port, one line each. */
export function composeProblems(text: string): string[] {
  const compose = parse(text) as { services: Record<string, Service> };
  const required = new Set([...text.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((m) => m[1]));
  const problems: string[] = [];
  for (const [name, service] of Object.entries(compose.services)) {
    for (const port of service.ports ?? [])
      if (!['127.0.0.1', '::1'].includes(hostAddressOf(port)))
        problems.push(`${name}: port ${JSON.stringify(port)} is published on all interfaces`);
    for (const [variable, value] of Object.entries(environmentOf(service))) {
      if (SECRET_NAME.test(variable) && !REQUIRED.test(value)) problems.push(`${name}: ${variable} is not a required \${${variable}:?…}`);
      if (/:-/.test(value) && SECRET_NAME.test(variable)) problems.push(`${name}: ${variable} has a default`);
      const url = /^postgres(?:ql)?:\/\/[^:@/]+:([^@]*)@/.exec(value);
      if (url) {
        const from = /^\$\{([A-Z][A-Z0-9_]*)\}$/.exec(url[1]);
        if (!from || !required.has(from[1])) problems.push(`${name}: ${variable} holds a password that is not a required variable`);
      }
    }
  }
  return problems;
}

interface Example {
  file: string;
  variable: (typeof CREDENTIAL_VARIABLES)[number];
  value: string;
}

/** Not a literal: a shell or compose expansion, a placeholder (`<token>`, `…`). */
const PLACEHOLDER = /^[$<]|…|\.\.\./;

/** The literal credentials a text shows: `NAME=value`, `NAME: value`, `${NAME:-value}`, `Bearer value`, a URL's password. */
export function literalCredentials(file: string, text: string): Example[] {
  const found: Example[] = [];
  const names = CREDENTIAL_VARIABLES.filter((v) => v !== 'DATABASE_URL').join('|');
  for (const m of text.matchAll(new RegExp(`\\b(${names})(?:=|:-|:\\s*)(?!\\$)(['"]?)([^\\s'"\`;)}]+)\\2`, 'g'))) {
    const variable = m[1] as Example['variable'];
    for (const value of m[3].split(',')) if (!PLACEHOLDER.test(value)) found.push({ file, variable, value });
  }
  for (const m of text.matchAll(/\bBearer\s+([^\s'"`\\]+)/g))
    if (!PLACEHOLDER.test(m[1]))
      for (const variable of ['BROKER_API_KEY', 'ADMIN_TOKEN'] as const) found.push({ file, variable, value: m[1] });
  for (const m of text.matchAll(/postgres(?:ql)?:\/\/[^:@/\s]+:([^@\s]+)@[^\s'"`]+/g))
    if (!PLACEHOLDER.test(m[1]) && !m[1].startsWith('*')) found.push({ file, variable: 'DATABASE_URL', value: m[0] });
  return found;
}

function refusal(variable: string, value: string): string | undefined {
  try {
    loadConfig({ [variable]: value });
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.message;
  }
}

describe('docker-compose.yml', () => {
  it('asks for every credential (no default, no literal) and publishes its ports on loopback only', () => {
    expect(composeProblems(read('docker-compose.yml'))).toEqual([]);
  });

  it('is checked for what the probe found: defaults, literal passwords and ports on every interface', () => {
    const published = `
services:
  sim:
    environment:
      SIM_WEBHOOK_SECRET: \${SIM_WEBHOOK_SECRET:?set it}
    ports: ['4010:4010']
  broker:
    environment:
      DATABASE_URL: postgres://broker:broker@postgres:5432/broker
      BROKER_API_KEY: \${BROKER_API_KEY:-dev-key-change-me-0000}
      ADMIN_TOKEN: \${ADMIN_TOKEN:?set it}
    ports: ['3000:3000', '127.0.0.1:3001:3001', { target: 3002, published: 3002 }, '[::1]:3003:3003']
`;
    expect(composeProblems(published)).toEqual([
      'sim: port "4010:4010" is published on all interfaces',
      'broker: port "3000:3000" is published on all interfaces',
      'broker: port {"target":3002,"published":3002} is published on all interfaces',
      'broker: DATABASE_URL holds a password that is not a required variable',
      'broker: BROKER_API_KEY is not a required ${BROKER_API_KEY:?…}',
      'broker: BROKER_API_KEY has a default',
    ]);
  });
});

describe('published example credentials', () => {
  const files = execFileSync('git', ['ls-files', '*.md', 'docker-compose.yml', 'Dockerfile', '.ci/*'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file !== '' && !file.startsWith('node_modules/'));
  const examples = files.flatMap((file) => literalCredentials(file, read(file)));

  it('finds the literal credentials a doc shows, and not its placeholders', () => {
    const doc = [
      'BROKER_API_KEY: ${BROKER_API_KEY:-dev-key-change-me-0000}',
      "curl -H 'authorization: Bearer dev-admin-token-change-me' localhost:3000/v1/admin/accounts",
      '$ export BROKER_URL=http://127.0.0.1:3000 ADMIN_TOKEN=dev-admin-token-change-me',
      'DATABASE_URL: postgres://broker:broker@postgres:5432/broker',
      'BROKER_API_KEY=… ADMIN_TOKEN=<admin token> KEY=$(cat .data/dev-api-key) -H "authorization: Bearer $KEY"',
      'postgres://postgres:***@127.0.0.1:5432/broker',
    ].join('\n');
    expect(literalCredentials('doc.md', doc).map((e) => [e.variable, e.value])).toEqual([
      ['BROKER_API_KEY', 'dev-key-change-me-0000'],
      ['ADMIN_TOKEN', 'dev-admin-token-change-me'],
      ['BROKER_API_KEY', 'dev-admin-token-change-me'],
      ['ADMIN_TOKEN', 'dev-admin-token-change-me'],
      ['DATABASE_URL', 'postgres://broker:broker@postgres:5432/broker'],
    ]);
  });

  it('each literal credential in the docs and the compose file stops the start, in one line naming its variable', () => {
    for (const { file, variable, value } of examples) {
      const message = refusal(variable, value);
      expect({ file, variable, refused: message !== undefined && message.includes(variable) && !message.includes('\n') }).toEqual({
        file,
        variable,
        refused: true,
      });
    }
  });

  it.each(CREDENTIAL_VARIABLES.filter((v) => v !== 'DATABASE_URL').flatMap((v) => [...PUBLISHED_EXAMPLE_CREDENTIALS].map((e) => [v, e])))(
    '%s=%s (published) stops the start, naming the variable, never the value',
    (variable, value) => {
      const message = refusal(variable, value);
      expect(message).toMatch(new RegExp(`^invalid configuration: .*${variable}`));
      expect(message).not.toContain(value === 'broker' ? '"broker"' : value);
    },
  );

  it("refuses a published key anywhere in BROKER_API_KEY's list, and a published password in DATABASE_URL", () => {
    expect(refusal('BROKER_API_KEY', 'sk_mine_0123456789abcdef,dev-key-change-me-0000')).toMatch(
      /^invalid configuration: BROKER_API_KEY holds a key published as an example/,
    );
    expect(refusal('DATABASE_URL', 'postgres://broker:broker@db.internal:5432/broker')).toMatch(
      /^invalid configuration: DATABASE_URL has a password published as an example/,
    );
    expect(refusal('DATABASE_URL', 'postgres://broker:0d4f6c2b9e@db.internal:5432/broker')).toBeUndefined();
    expect(refusal('ADMIN_TOKEN', 'adm_mine_0123456789abcdef')).toBeUndefined();
  });
});
