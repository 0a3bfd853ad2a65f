/**
 * What each adapter needs to reach its vendor, as data: the broker reads every row from
 * `PROVIDER_<NAME>_<SUFFIX>` (name upper-cased, dashes as underscores) and refuses to start when
 * one is missing or does not match its rule. A new adapter adds its rows here and nothing else in
 * the configuration.
 */
import { Secret } from './secret';
import { loadVonagePrivateKey } from './vonage/vonage-private-key';

export const ADAPTERS = ['sim', 'twilio', 'vonage', 'africastalking', 'infobip'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

/** Adapters that talk to a real vendor: they need `PUBLIC_URL`, and their API base has a default. */
export const VENDOR_ADAPTERS: readonly AdapterName[] = ['twilio', 'vonage', 'africastalking', 'infobip'];

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
  /** An optional credential may be unset; when set, it must be accepted. */
  optional?: boolean;
  /** Turns an accepted value into the credential (a key file's path into the PEM it holds). */
  load?(value: string): string;
}

/** The secret a vendor that signs nothing finds in the callback URLs the broker gives it (webhook-token.ts). */
const WEBHOOK_TOKEN: CredentialSpec = {
  suffix: 'WEBHOOK_TOKEN',
  key: 'webhookToken',
  secret: true,
  accepts: (value) => /^[A-Za-z0-9_-]{32,128}$/.test(value),
  rule: 'must be 32 to 128 letters, digits, _ or - (make one with: openssl rand -hex 32); it goes into the callback URLs you register',
};

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
  vonage: [
    {
      suffix: 'API_KEY',
      key: 'apiKey',
      secret: false,
      accepts: (value) => /^[a-zA-Z0-9]{8}$/.test(value),
      rule: 'must be the 8-character API key (Vonage dashboard, API settings)',
    },
    {
      suffix: 'API_SECRET',
      key: 'apiSecret',
      secret: true,
      accepts: (value) => /^[a-zA-Z0-9]{6,32}$/.test(value),
      rule: 'must be the API secret, 6 to 32 letters and digits (Vonage dashboard, API settings)',
    },
    {
      suffix: 'APPLICATION_ID',
      key: 'applicationId',
      secret: false,
      accepts: (value) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value),
      rule: "must be the application's id, a lowercase UUID (Vonage dashboard, Applications)",
    },
    {
      suffix: 'PRIVATE_KEY',
      key: 'privateKey',
      secret: true,
      optional: true,
      accepts: (value) => loadVonagePrivateKey(value) !== undefined,
      load: (value) => loadVonagePrivateKey(value)!,
      rule: "must be the application's RSA private key: PEM text, or the path of a readable private.key file",
    },
    {
      suffix: 'SIGNATURE_SECRET',
      key: 'signatureSecret',
      secret: true,
      accepts: (value) => /^\S{16,256}$/.test(value),
      rule: 'must be the signature secret that signs webhooks, 16 to 256 characters (Vonage dashboard, API settings)',
    },
  ],
  africastalking: [
    {
      suffix: 'USERNAME',
      key: 'username',
      secret: false,
      accepts: (value) => /^[A-Za-z0-9_.-]{1,64}$/.test(value),
      rule: "must be the application's username (Africa's Talking dashboard; sandbox for the sandbox)",
    },
    {
      suffix: 'API_KEY',
      key: 'apiKey',
      secret: true,
      accepts: (value) => /^\S{20,128}$/.test(value),
      rule: "must be the application's API key, 20 to 128 characters (Africa's Talking dashboard, Settings, API Key)",
    },
    WEBHOOK_TOKEN,
  ],
  infobip: [
    {
      suffix: 'API_KEY',
      key: 'apiKey',
      secret: true,
      accepts: (value) => /^[A-Za-z0-9-]{20,128}$/.test(value),
      rule: 'must be an API key, 20 to 128 letters, digits or dashes (Infobip portal, Developers, API keys)',
    },
    WEBHOOK_TOKEN,
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
      if (!spec.optional) problems.push(`${variable} is required for provider "${provider}" (${adapter})`);
    } else if (!spec.accepts(value)) {
      problems.push(`${variable} ${spec.rule}${spec.secret ? '' : ` (got "${value}")`}`);
    } else {
      const loaded = spec.load ? spec.load(value) : value;
      credentials[spec.key] = spec.secret ? new Secret(loaded) : loaded;
    }
  }
  return { credentials, problems };
}

/** A credential the configuration guarantees (readCredentials checked it); throws on a wiring mistake. */
export function credential(credentials: ProviderCredentials, key: string): string {
  const value = optionalCredential(credentials, key);
  if (value === undefined) throw new Error(`missing credential "${key}"`);
  return value;
}

/** An optional credential (`CredentialSpec.optional`), or undefined when it was not set. */
export function optionalCredential(credentials: ProviderCredentials, key: string): string | undefined {
  const value = credentials[key];
  return value === undefined || typeof value === 'string' ? value : value.reveal();
}
