/**
 * What each adapter needs to reach its vendor, as data: the broker reads every row from
 * `PROVIDER_<NAME>_<SUFFIX>` (name upper-cased, dashes as underscores) and refuses to start when
 * one is missing or does not match its rule. A new adapter adds its rows here and nothing else in
 * the configuration.
 */
import { Secret } from './secret';

export const ADAPTERS = ['sim', 'twilio'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

/** Adapters that talk to a real vendor: they need `PUBLIC_URL`, and their API base has a default. */
export const VENDOR_ADAPTERS: readonly AdapterName[] = ['twilio'];

export interface CredentialSpec {
  /** `ACCOUNT_SID` → `PROVIDER_PRIMARY_ACCOUNT_SID`. */
  suffix: string;
  /** The key in `CpaasProviderConfig.credentials`. */
  key: string;
  /** A secret is kept as a `Secret` and never echoed in an error. */
  secret: boolean;
  /** Accepts the (trimmed) value; `rule` says what it allows. */
  accepts(value: string): boolean;
  rule: string;
}

export const ADAPTER_CREDENTIALS: Record<AdapterName, readonly CredentialSpec[]> = {
  sim: [],
  twilio: [
    {
      suffix: 'ACCOUNT_SID',
      key: 'accountSid',
      secret: false,
      accepts: (value) => /^AC[0-9a-f]{32}$/.test(value),
      rule: 'must be AC followed by 32 lowercase hex digits (Twilio console, Account Info)',
    },
    {
      suffix: 'AUTH_TOKEN',
      key: 'authToken',
      secret: true,
      accepts: (value) => /^[0-9a-fA-F]{32}$/.test(value),
      rule: 'must be the 32-hex-digit auth token (Twilio console, Account Info)',
    },
  ],
};

/** The variable a provider's credential is read from: `primary-eu` + `AUTH_TOKEN` → `PROVIDER_PRIMARY_EU_AUTH_TOKEN`. */
export function credentialVariable(provider: string, suffix: string): string {
  return `PROVIDER_${provider.toUpperCase().replace(/-/g, '_')}_${suffix}`;
}

export type ProviderCredentials = Record<string, string | Secret>;

/** Reads one adapter's credentials; each problem is one line naming the variable, never its secret value. */
export function readCredentials(
  provider: string,
  adapter: AdapterName,
  env: Record<string, string | undefined>,
): { credentials: ProviderCredentials; problems: string[] } {
  const credentials: ProviderCredentials = {};
  const problems: string[] = [];
  for (const spec of ADAPTER_CREDENTIALS[adapter]) {
    const variable = credentialVariable(provider, spec.suffix);
    const value = env[variable]?.trim();
    if (!value) {
      problems.push(`${variable} is required for provider "${provider}" (${adapter})`);
    } else if (!spec.accepts(value)) {
      problems.push(`${variable} ${spec.rule}${spec.secret ? '' : ` (got "${value}")`}`);
    } else {
      credentials[spec.key] = spec.secret ? new Secret(value) : value;
    }
  }
  return { credentials, problems };
}

/** A credential the configuration guarantees (readCredentials checked it); throws on a wiring mistake. */
export function credential(credentials: ProviderCredentials, key: string): string {
  const value = credentials[key];
  if (value === undefined) throw new Error(`missing credential "${key}"`);
  return typeof value === 'string' ? value : value.reveal();
}
