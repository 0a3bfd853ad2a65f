/**
 * The operator CLI: `broker <group> <action> [args] [--options]` against the broker's admin API.
 * `runCli` never exits the process; it answers the exit code (0 ok, 1 API error, 2 usage error,
 * 3 broker unreachable) so tests can run it in-process.
 */
import { parseArgs } from 'node:util';
import { BrokerApiError, BrokerClient, BrokerNetworkError, BrokerTimeoutError } from '@app/sdk';
import { AdminApi } from './admin-api';
import { COMMANDS, type Command, type CommandOption } from './commands';
import type { CliEnvironment } from './config';
import { EXIT } from './exit-codes';
import { terminalCell, terminalText } from './terminal-text';
import { UsageError } from './usage-error';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Opens a URL in the user's browser (`ops open`); without one, the URL is only printed. */
  open?(url: string): Promise<boolean>;
}

const DEFAULT_BROKER_URL = 'http://127.0.0.1:3000';

const OPTIONS = {
  url: { type: 'string' },
  'admin-token': { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  reason: { type: 'string' },
  capabilities: { type: 'string' },
  provider: { type: 'string' },
  label: { type: 'string' },
  'special-rate': { type: 'string' },
} as const;

const OPTION_HELP: Record<CommandOption, string> = {
  reason: '--reason <text>',
  capabilities: '--capabilities sms,voice',
  provider: '--provider <name>',
  label: '--label <text>',
  'special-rate': '--special-rate allow|refuse',
};

function usageLine(command: Command): string {
  const args = command.args.map((arg, i) => (i < (command.required ?? command.args.length) ? `<${arg}>` : `[${arg}]`));
  const options = command.options.map((option) => `[${OPTION_HELP[option]}]`);
  return ['broker', ...command.words, ...args, ...options].join(' ');
}

function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => usageLine(c).length));
  return [
    'Session Broker operator CLI: accounts, API keys, providers and proxy numbers over the admin API; an account’s sessions with its API key; the ops page.',
    '',
    'Usage: npm run broker -- <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${usageLine(c).padEnd(width)}  ${c.summary}`),
    '',
    'Options:',
    `  --url <url>            the broker (default: $BROKER_URL, else http://127.0.0.1:$PORT, else ${DEFAULT_BROKER_URL})`,
    "  --admin-token <token>  the broker's ADMIN_TOKEN (default: $ADMIN_TOKEN)",
    "  --api-key <key>        an account's API key, for the sessions and rescue commands (default: $BROKER_API_KEY)",
    "  --json                 print the API's JSON answer instead of text",
    '  -h, --help             this help',
    '',
    'Exit codes: 0 ok, 1 the broker refused (its problem detail is printed), 2 usage error, 3 cannot reach the broker.',
  ].join('\n');
}

export async function runCli(argv: string[], environment: CliEnvironment, io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    return usageFailure(io, error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;

  if (values.help || positionals[0] === 'help') {
    io.stdout(helpText());
    return EXIT.ok;
  }
  if (positionals.length === 0) return usageFailure(io, 'no command given');

  const command = COMMANDS.find((c) => c.words[0] === positionals[0] && c.words[1] === positionals[1]);
  if (!command) {
    const group = COMMANDS.filter((c) => c.words[0] === positionals[0]);
    const known = group.length ? ` (${positionals[0]}: ${group.map((c) => c.words[1]).join(', ')})` : '';
    return usageFailure(io, `unknown command "${positionals.slice(0, 2).join(' ')}"${known}`);
  }

  const url = values.url ?? environment.url ?? DEFAULT_BROKER_URL;
  try {
    const args = positionals.slice(2);
    const required = command.required ?? command.args.length;
    if (args.length < required || args.length > command.args.length) {
      throw new UsageError(`expected ${describeArgs(command)}: ${usageLine(command)}`);
    }
    const options: Partial<Record<CommandOption, string>> = {};
    for (const name of ['reason', 'capabilities', 'provider', 'label', 'special-rate'] as const) {
      if (values[name] === undefined) continue;
      if (!command.options.includes(name)) throw new UsageError(`--${name} does not apply to "${command.words.join(' ')}"`);
      options[name] = values[name];
    }
    const baseUrl = brokerUrl(url);
    const credentials = credentialsFor(command, values['admin-token'] ?? environment.adminToken, values['api-key'] ?? environment.apiKey);

    await command.run({
      get api(): AdminApi {
        return new AdminApi(baseUrl, credentials);
      },
      get account(): BrokerClient {
        // One attempt, like the admin API: the operator sees what the broker said.
        return new BrokerClient({ baseUrl, apiKey: credentials, retries: 0, timeoutMs: 15_000 });
      },
      baseUrl,
      openUrl: (target) => io.open?.(target) ?? Promise.resolve(false),
      args,
      options,
      json: values.json ?? false,
      // What the broker sent (a provider's error text, a name) never reaches the terminal as control characters.
      print: (text) => io.stdout(terminalText(text)),
    });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(io, error.message);
    if (error instanceof BrokerApiError) {
      io.stderr(`broker: ${oneLine(error.detail || error.title)} (${error.status} ${oneLine(error.title)})`);
      return EXIT.apiError;
    }
    if (error instanceof BrokerNetworkError || error instanceof BrokerTimeoutError) {
      io.stderr(`broker: cannot reach the broker at ${url}: ${oneLine(error.message)}`);
      return EXIT.unreachable;
    }
    throw error;
  }
}

/** The credential `command` needs, or a usage error naming how to give it. */
function credentialsFor(command: Command, adminToken: string | undefined, apiKey: string | undefined): string {
  if (command.auth === 'none') return '';
  if (command.auth === 'account') {
    if (!apiKey) throw new UsageError('no API key: pass --api-key or set BROKER_API_KEY');
    if (apiKey.includes(',')) throw new UsageError('BROKER_API_KEY holds several keys: pass the one to use with --api-key');
    return apiKey;
  }
  if (!adminToken) throw new UsageError('no admin token: pass --admin-token or set ADMIN_TOKEN');
  return adminToken;
}

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}

function describeArgs(command: Command): string {
  if (command.args.length === 0) return 'no arguments';
  return command.args.map((a) => `<${a}>`).join(' ');
}

function brokerUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url is not a URL: "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be http or https: "${url}"`);
  return parsed.href.replace(/\/+$/, '');
}

function usageFailure(io: CliIo, message: string): number {
  io.stderr(`broker: ${oneLine(message)} (see --help)`);
  return EXIT.usage;
}

function oneLine(text: string): string {
  return terminalCell(text).replace(/\s+/g, ' ').trim();
}
