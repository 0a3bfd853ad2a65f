/** Every CLI command: its words, arguments, options, one-line summary, and what it does. */
import type { AccountRescue, BrokerClient, Interaction, ProviderHealth, Session } from '@app/sdk';
import type { AdminApi, ApiKeyView, NumberImportView } from './admin-api';
import { percent, table } from './table';
import { terminalJson } from './terminal-text';
import { UsageError } from './usage-error';

export type CommandOption = 'reason' | 'capabilities' | 'provider' | 'label' | 'special-rate';

interface CommandContext {
  /** The admin API (ADMIN_TOKEN); read only by the commands that use it. */
  readonly api: AdminApi;
  /** The account API (an API key), for the `sessions` commands; read only by them. */
  readonly account: BrokerClient;
  /** The broker's base URL (`--url`, BROKER_URL, PORT). */
  readonly baseUrl: string;
  /** Opens a URL in the user's browser; false when this machine has no opener. */
  openUrl(url: string): Promise<boolean>;
  args: string[];
  options: Partial<Record<CommandOption, string>>;
  /** Print the raw JSON answers instead of text. */
  json: boolean;
  print(text: string): void;
}

export interface Command {
  words: [string, string];
  /** Whose credentials it needs: the admin token (the default), an account's API key, or none (it calls no API). */
  auth?: 'admin' | 'account' | 'none';
  args: string[];
  /** `args` after this many are optional. */
  required?: number;
  options: CommandOption[];
  summary: string;
  run(context: CommandContext): Promise<void>;
}

const CHANNELS = ['sms', 'voice'];

function output(context: CommandContext, body: unknown, text: () => string): void {
  context.print(context.json ? terminalJson(body) : text());
}

function keyLine(key: ApiKeyView): string {
  const label = key.label ? ` "${key.label}"` : '';
  return `${key.id}  ${key.prefix}…${label}${key.revokedAt ? `  revoked ${key.revokedAt}` : ''}`;
}

function providerLine(provider: ProviderHealth): string {
  return `${provider.name}: ${provider.disabled ? 'disabled' : 'enabled'} (breaker ${provider.state})`;
}

function forcedLine(provider: ProviderHealth): string {
  const by = provider.forcedBy ? `, forced by ${provider.forcedBy}: ${provider.reason ?? ''}` : '';
  return `${provider.name}: breaker ${provider.state}${by} (${provider.disabled ? 'disabled' : 'enabled'})`;
}

/** `providers force-open|force-close`: the reason is required, as the history records it. */
function forceCommand(word: 'force-open' | 'force-close', state: 'OPEN' | 'CLOSED', summary: string): Command {
  return {
    words: ['providers', word],
    args: ['name'],
    options: ['reason'],
    summary,
    async run(context) {
      const reason = context.options.reason;
      if (reason === undefined || reason.trim() === '')
        throw new UsageError(`providers ${word} needs --reason <text>: it is recorded in the breaker history`);
      const provider = await context.api.forceBreaker(context.args[0], state, reason);
      output(context, provider, () => forcedLine(provider));
    },
  };
}

function importLines(result: NumberImportView): string[] {
  const list = (numbers: string[]) => (numbers.length ? numbers.join(', ') : 'none');
  return [
    `${result.provider}: ${result.changed ? 'imported' : 'nothing to change'}`,
    `added          ${list(result.added)}`,
    `already there  ${list(result.alreadyThere)}`,
    `updated        ${list(result.updated)}`,
    ...result.failed.map((f) => `failed         ${f.number}: ${f.reason}`),
  ];
}

function sessionLines(session: Session): string[] {
  const participants = session.participants.map((p) => p.number).join(', ');
  return [
    `session      ${session.id}`,
    `status       ${session.status}${session.expiredReason ? ` (${session.expiredReason})` : ''}`,
    `channels     ${session.channels.join(',')}`,
    `proxy        ${session.proxyNumber} on ${session.provider}`,
    ...session.numberHistory
      .slice(0, -1)
      .map((n) => `before       ${n.proxyNumber} on ${n.provider}, until ${n.until} (moved by a rescue)`),
    `participants ${participants}`,
    `expires      ${session.expiresAt}${session.idleTtlSeconds ? `, or ${session.idleTtlSeconds} s after its last interaction` : ''}`,
    `last         ${session.lastInteractionAt ?? 'no interaction yet'}`,
    ...(session.uniqueName ? [`name         ${session.uniqueName}`] : []),
  ];
}

function rescueLines(rescue: AccountRescue): string[] {
  if (!rescue.enabled) return ['rescue  off: sessions stay on their provider until they end'];
  return [`rescue  on: sessions move off a provider OPEN for ${rescue.afterSeconds} s`, `notice  ${rescue.notice ?? 'none'}`];
}

function interactionLine(interaction: Interaction): string {
  return `${interaction.id}  ${interaction.channel}  ${interaction.from} -> ${interaction.to}  ${interaction.status}`;
}

function capabilities(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const list = value
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  const wrong = list.filter((c) => !CHANNELS.includes(c));
  if (list.length === 0 || wrong.length > 0) throw new UsageError(`--capabilities takes sms, voice or sms,voice (got "${value}")`);
  return [...new Set(list)];
}

export const COMMANDS: Command[] = [
  {
    words: ['sessions', 'show'],
    args: ['id'],
    options: [],
    auth: 'account',
    summary: 'show one of the account’s sessions: channels, proxy number, expiry (needs the account’s API key)',
    async run(context) {
      const session = await context.account.getSession(context.args[0]);
      output(context, session, () => sessionLines(session).join('\n'));
    },
  },
  {
    words: ['sessions', 'interactions'],
    args: ['id'],
    options: [],
    auth: 'account',
    summary: 'list a session’s calls and messages, with the channel and status of each (needs the account’s API key)',
    async run(context) {
      const interactions = await context.account.listInteractions(context.args[0]);
      output(context, { interactions }, () =>
        interactions.length === 0
          ? 'No interactions.'
          : table(
              ['INTERACTION', 'CHANNEL', 'FROM', 'TO', 'STATUS', 'AT'],
              interactions.map((i) => [i.id, i.channel, i.from, i.to, i.status, i.createdAt]),
            ),
      );
    },
  },
  {
    words: ['sessions', 'message'],
    args: ['id', 'to', 'text'],
    options: [],
    auth: 'account',
    summary: 'send a text from the session’s proxy number to one participant (needs the account’s API key)',
    async run(context) {
      const [id, to, text] = context.args;
      const sent = await context.account.sendMessage(id, { to, text });
      output(context, sent, () => `sent  ${interactionLine(sent)}`);
    },
  },
  {
    words: ['rescue', 'show'],
    args: [],
    options: [],
    auth: 'account',
    summary:
      'whether the account’s sessions move off a provider that stays down, after how long, and the notice (needs the account’s API key)',
    async run(context) {
      const rescue = await context.account.getRescue();
      output(context, rescue, () => rescueLines(rescue).join('\n'));
    },
  },
  {
    words: ['rescue', 'set'],
    args: ['after-seconds', 'notice'],
    required: 1,
    options: [],
    auth: 'account',
    summary:
      'move the account’s sessions off a provider OPEN this many seconds, texting the notice from the new number (needs its API key)',
    async run(context) {
      const [after, notice] = context.args;
      if (!/^\d+$/.test(after)) throw new UsageError(`after-seconds is a whole number of seconds (got "${after}")`);
      const rescue = await context.account.setRescue({ afterSeconds: Number(after), notice: notice ?? null });
      output(context, rescue, () => rescueLines(rescue).join('\n'));
    },
  },
  {
    words: ['rescue', 'off'],
    args: [],
    options: [],
    auth: 'account',
    summary: 'turn session rescue off: sessions stay on their provider until they end (needs the account’s API key)',
    async run(context) {
      const rescue = await context.account.disableRescue();
      output(context, rescue, () => rescueLines(rescue).join('\n'));
    },
  },
  {
    words: ['accounts', 'create'],
    args: ['name'],
    options: ['label'],
    summary: 'create an account, its first API key and webhook secret (both shown once)',
    async run(context) {
      const created = await context.api.createAccount(context.args[0], context.options.label);
      output(context, created, () =>
        [
          `account  ${created.account.id}  ${created.account.name}`,
          `key id   ${created.apiKey.id}`,
          `api key  ${created.apiKey.key}`,
          `webhook secret  ${created.webhookSecret.secret}`,
          "Store both now: the broker keeps only the key's hash, and shows the secret only this once.",
        ].join('\n'),
      );
    },
  },
  {
    words: ['accounts', 'reveal-secret'],
    args: ['accountId'],
    options: [],
    summary: "show an account's webhook secret if it was never shown (once; then only a rotation makes a new one)",
    async run(context) {
      const revealed = await context.api.revealWebhookSecret(context.args[0]);
      output(context, revealed, () =>
        [
          `webhook secret  ${revealed.secret}`,
          `created         ${revealed.createdAt}`,
          ...(revealed.previousSecretExpiresAt ? [`previous signs until ${revealed.previousSecretExpiresAt}`] : []),
          'Store it now: it is not shown again.',
        ].join('\n'),
      );
    },
  },
  {
    words: ['accounts', 'destinations'],
    args: ['account-id', 'countries'],
    required: 1,
    options: ['special-rate'],
    summary: 'set the countries an account may reach (NG,GH; "pool" for the pool numbers\' countries) and special-rate numbers',
    async run(context) {
      const [accountId, countries] = context.args;
      const special = context.options['special-rate'];
      if (special !== undefined && special !== 'allow' && special !== 'refuse')
        throw new UsageError(`--special-rate takes allow or refuse (got "${special}")`);
      if (countries === undefined && special === undefined) throw new UsageError('give the countries, --special-rate, or both');
      const list = countries === undefined || countries === 'pool' ? undefined : countries.split(',').map((c) => c.trim().toUpperCase());
      if (list?.some((c) => !/^[A-Z]{2}$/.test(c))) throw new UsageError(`countries are ISO 3166 codes such as NG,GH (got "${countries}")`);
      const account = await context.api.setDestinations(accountId, {
        ...(countries === undefined ? {} : { allowedCountries: list ?? null }),
        ...(special === undefined ? {} : { allowSpecialRate: special === 'allow' }),
      });
      output(context, account, () =>
        [
          `account            ${account.id}  ${account.name}`,
          `allowed countries  ${account.allowedCountries?.join(', ') ?? 'the countries of the pool numbers'}`,
          `special-rate       ${account.allowSpecialRate ? 'allowed' : 'refused'}`,
        ].join('\n'),
      );
    },
  },
  {
    words: ['accounts', 'list'],
    args: [],
    options: [],
    summary: 'list accounts with their API keys (prefixes only)',
    async run(context) {
      const { accounts } = await context.api.listAccounts();
      output(context, { accounts }, () => {
        if (accounts.length === 0) return 'No accounts.';
        return table(
          ['ACCOUNT', 'NAME', 'CREATED', 'ACTIVE KEYS', 'KEYS'],
          accounts.map((a) => [
            a.id,
            a.name,
            a.createdAt,
            a.apiKeys.filter((k) => !k.revokedAt).length,
            a.apiKeys.map((k) => `${k.prefix}…${k.revokedAt ? ' (revoked)' : ''}`).join(', '),
          ]),
        );
      });
    },
  },
  {
    words: ['keys', 'create'],
    args: ['accountId'],
    options: ['label'],
    summary: 'add an API key to an account (the key is shown once)',
    async run(context) {
      const key = await context.api.createKey(context.args[0], context.options.label);
      output(context, key, () =>
        [
          `key id   ${key.id}`,
          `api key  ${key.key}`,
          'Store the API key now: the broker keeps only its hash and cannot show it again.',
        ].join('\n'),
      );
    },
  },
  {
    words: ['keys', 'list'],
    args: ['accountId'],
    required: 0,
    options: [],
    summary: 'list API keys, of every account or of one',
    async run(context) {
      const { accounts } = await context.api.listAccounts();
      const chosen = context.args[0] ? accounts.filter((a) => a.id === context.args[0]) : accounts;
      const keys = chosen.flatMap((a) => a.apiKeys.map((k) => ({ ...k, account: a.name })));
      output(context, { apiKeys: keys }, () =>
        keys.length === 0
          ? 'No API keys.'
          : table(
              ['KEY ID', 'ACCOUNT', 'PREFIX', 'LABEL', 'CREATED', 'REVOKED'],
              keys.map((k) => [k.id, k.account, `${k.prefix}…`, k.label, k.createdAt, k.revokedAt]),
            ),
      );
    },
  },
  {
    words: ['keys', 'revoke'],
    args: ['keyId'],
    options: [],
    summary: 'revoke an API key; requests with it are refused from then on',
    async run(context) {
      const key = await context.api.revokeKey(context.args[0]);
      output(context, key, () => `revoked  ${keyLine(key)}`);
    },
  },
  {
    words: ['providers', 'list'],
    args: [],
    options: [],
    summary: 'list providers in routing order with their breaker state',
    async run(context) {
      const health = await context.api.listProviders();
      output(context, health, () =>
        table(
          ['PROVIDER', 'STATE', 'ROUTING', 'SINCE', 'OPENED AT', 'FAILURES', 'ERROR RATE', 'LAST ERROR', 'FORCED BY'],
          health.providers.map((p) => [
            p.name,
            p.state,
            p.disabled ? 'disabled' : 'enabled',
            p.since,
            p.openedAt,
            p.consecutiveFailures,
            `${percent(p.windowErrorRate)}${typeof p.windowCalls === 'number' ? ` of ${p.windowCalls}` : ''}`,
            p.lastError,
            p.forcedBy,
          ]),
        ),
      );
    },
  },
  {
    words: ['providers', 'disable'],
    args: ['name'],
    options: ['reason'],
    summary: 'take a provider out of routing (its breaker keeps running)',
    async run(context) {
      const provider = await context.api.disableProvider(context.args[0], context.options.reason);
      output(context, provider, () => providerLine(provider));
    },
  },
  {
    words: ['providers', 'enable'],
    args: ['name'],
    options: [],
    summary: 'put a disabled provider back into routing',
    async run(context) {
      const provider = await context.api.enableProvider(context.args[0]);
      output(context, provider, () => providerLine(provider));
    },
  },
  forceCommand(
    'force-open',
    'OPEN',
    'force the provider’s breaker OPEN (--reason required): new sessions go elsewhere until it recovers by its health checks',
  ),
  forceCommand(
    'force-close',
    'CLOSED',
    'force the provider’s breaker CLOSED (--reason required): back in rotation with fresh counters; it can trip again',
  ),
  {
    words: ['numbers', 'add'],
    args: ['provider', 'number'],
    options: ['capabilities'],
    summary: "add an E.164 proxy number to a provider's pool (or re-enable it)",
    async run(context) {
      const number = await context.api.addNumber(context.args[0], context.args[1], capabilities(context.options.capabilities));
      output(context, number, () => `added  ${number.id}  ${number.provider}  ${number.number}  ${number.capabilities.join(',')}`);
    },
  },
  {
    words: ['numbers', 'list'],
    args: [],
    options: ['provider'],
    summary: 'list the proxy-number pool, with the active sessions on each number',
    async run(context) {
      const { numbers } = await context.api.listNumbers(context.options.provider);
      output(context, { numbers }, () =>
        numbers.length === 0
          ? 'No proxy numbers.'
          : table(
              ['ID', 'PROVIDER', 'NUMBER', 'CAPABILITIES', 'ENABLED', 'ACTIVE SESSIONS', 'ACCOUNT'],
              numbers.map((n) => [
                n.id,
                n.provider,
                n.number,
                n.capabilities.join(','),
                n.enabled ? 'yes' : 'no',
                n.activeSessions,
                n.accountId ?? 'shared',
              ]),
            ),
      );
    },
  },
  {
    words: ['numbers', 'import'],
    args: [],
    options: ['provider'],
    summary: "import a vendor account's numbers into the pool and point their webhooks at PUBLIC_URL",
    async run(context) {
      const provider = context.options.provider;
      if (!provider) throw new UsageError('numbers import needs --provider NAME');
      const result = await context.api.importNumbers(provider);
      output(context, result, () => importLines(result).join('\n'));
    },
  },
  {
    words: ['numbers', 'dedicate'],
    args: ['id', 'account'],
    options: [],
    summary: 'dedicate a proxy number to one account: only its sessions get it, the shared pool no longer does',
    async run(context) {
      const number = await context.api.dedicateNumber(context.args[0], context.args[1]);
      output(context, number, () => `dedicated  ${number.id}  ${number.provider}  ${number.number}  to ${number.accountId}`);
    },
  },
  {
    words: ['numbers', 'share'],
    args: ['id'],
    options: [],
    summary: 'return a dedicated proxy number to the shared pool',
    async run(context) {
      const number = await context.api.shareNumber(context.args[0]);
      output(context, number, () => `shared  ${number.id}  ${number.provider}  ${number.number}`);
    },
  },
  {
    words: ['numbers', 'disable'],
    args: ['id'],
    options: [],
    summary: 'stop giving a number to new sessions (sessions on it keep it)',
    async run(context) {
      const number = await context.api.disableNumber(context.args[0]);
      output(context, number, () => `disabled  ${number.id}  ${number.provider}  ${number.number}`);
    },
  },
  {
    words: ['ops', 'open'],
    args: [],
    options: [],
    auth: 'none',
    summary: 'open the live ops page in your browser (open, start or xdg-open), or print its URL',
    async run(context) {
      const url = `${context.baseUrl}/ops`;
      const opened = await context.openUrl(url);
      output(context, { url, opened }, () =>
        opened ? `opening ${url} in your browser` : `open ${url} in a browser (no opener found here: open, start or xdg-open)`,
      );
    },
  },
];
