/**
 * The broker's admin HTTP API (`Authorization: Bearer <ADMIN_TOKEN>`), as the operator CLI uses it.
 * Failures are the SDK's typed errors: BrokerApiError from a problem+json answer, BrokerNetworkError
 * or BrokerTimeoutError when no answer came. No retries: creating an account or key is not idempotent.
 */
import { BrokerApiError, BrokerNetworkError, BrokerTimeoutError, type CpaasHealth, type ProviderHealth } from '@app/sdk';

export interface ApiKeyView {
  id: string;
  accountId: string;
  prefix: string;
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
}

interface AccountView {
  id: string;
  name: string;
  createdAt: string;
  apiKeys: ApiKeyView[];
  allowedCountries: string[] | null;
  allowSpecialRate: boolean;
}

interface CreatedApiKey extends ApiKeyView {
  /** Shown once. */
  key: string;
}

interface FirstWebhookSecret {
  /** Shown once. */
  secret: string;
  createdAt: string;
}

interface RevealedWebhookSecret extends FirstWebhookSecret {
  previousSecretExpiresAt: string | null;
}

interface ProxyNumberView {
  id: string;
  provider: string;
  number: string;
  capabilities: string[];
  enabled: boolean;
  /** The account the number is dedicated to; null: the shared pool. */
  accountId: string | null;
  activeSessions: number;
  createdAt: string;
}

export interface NumberImportView {
  provider: string;
  added: string[];
  alreadyThere: string[];
  updated: string[];
  failed: Array<{ number: string; reason: string }>;
  changed: boolean;
}

export class AdminApi {
  constructor(
    private readonly baseUrl: string,
    private readonly adminToken: string,
    private readonly timeoutMs = 15_000,
  ) {}

  listAccounts(): Promise<{ accounts: AccountView[] }> {
    return this.call('GET', '/v1/admin/accounts');
  }

  createAccount(name: string, label?: string): Promise<{ account: AccountView; apiKey: CreatedApiKey; webhookSecret: FirstWebhookSecret }> {
    return this.call('POST', '/v1/admin/accounts', { name, label });
  }

  revealWebhookSecret(accountId: string): Promise<RevealedWebhookSecret> {
    return this.call('POST', `/v1/admin/accounts/${encodeURIComponent(accountId)}/webhook-secret/reveal`);
  }

  createKey(accountId: string, label?: string): Promise<CreatedApiKey> {
    return this.call('POST', `/v1/admin/accounts/${encodeURIComponent(accountId)}/api-keys`, { label });
  }

  setDestinations(accountId: string, body: { allowedCountries?: string[] | null; allowSpecialRate?: boolean }): Promise<AccountView> {
    return this.call('PUT', `/v1/admin/accounts/${encodeURIComponent(accountId)}/destinations`, body);
  }

  revokeKey(keyId: string): Promise<ApiKeyView> {
    return this.call('DELETE', `/v1/admin/api-keys/${encodeURIComponent(keyId)}`);
  }

  listProviders(): Promise<CpaasHealth> {
    return this.call('GET', '/v1/admin/providers');
  }

  disableProvider(name: string, reason?: string): Promise<ProviderHealth> {
    return this.call('POST', `/v1/admin/providers/${encodeURIComponent(name)}/disable`, { reason });
  }

  /** Applied by the breaker leader; the answer once the replica asked shows it. */
  forceBreaker(name: string, state: 'OPEN' | 'CLOSED', reason: string): Promise<ProviderHealth> {
    return this.call('POST', `/v1/admin/providers/${encodeURIComponent(name)}/breaker`, { state, reason });
  }

  enableProvider(name: string): Promise<ProviderHealth> {
    return this.call('POST', `/v1/admin/providers/${encodeURIComponent(name)}/enable`, {});
  }

  listNumbers(provider?: string): Promise<{ numbers: ProxyNumberView[] }> {
    const query = provider ? `?provider=${encodeURIComponent(provider)}` : '';
    return this.call('GET', `/v1/admin/numbers${query}`);
  }

  addNumber(provider: string, number: string, capabilities?: string[]): Promise<ProxyNumberView> {
    return this.call('POST', '/v1/admin/numbers', { provider, number, capabilities });
  }

  importNumbers(provider: string): Promise<NumberImportView> {
    return this.call('POST', `/v1/admin/providers/${encodeURIComponent(provider)}/numbers/import`, {});
  }

  dedicateNumber(id: string, accountId: string): Promise<ProxyNumberView> {
    return this.call('PUT', `/v1/admin/numbers/${encodeURIComponent(id)}/account`, { accountId });
  }

  shareNumber(id: string): Promise<ProxyNumberView> {
    return this.call('DELETE', `/v1/admin/numbers/${encodeURIComponent(id)}/account`);
  }

  disableNumber(id: string): Promise<ProxyNumberView> {
    return this.call('DELETE', `/v1/admin/numbers/${encodeURIComponent(id)}`);
  }

  private async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: Record<string, unknown>): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${this.adminToken}` };
    if (body) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body ? JSON.stringify(body) : undefined,
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new BrokerTimeoutError(this.timeoutMs);
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new BrokerNetworkError(cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error)), {
        cause: error,
      });
    }
    if (!response.ok) throw await BrokerApiError.fromResponse(response);
    return (await response.json()) as T;
  }
}
