/**
 * Imports a vendor account's numbers into the proxy-number pool: lists every number the account
 * holds (all pages), adds the new ones, and points each one's inbound SMS, voice and status
 * webhooks at this broker's PUBLIC_URL routes (docs/providers.md). Idempotent: a second run adds nothing,
 * updates nothing, and says so. Each vendor call goes through the registry, so it feeds the
 * provider's breaker like any other.
 */
import { Inject, Injectable } from '@nestjs/common';
import { isE164, providerWebhookUrls, type NumberWebhooks, type ProviderNumber } from '@app/cpaas';
import { ProblemException, unknownProvider } from '../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { ProxyNumberRepository } from '../numbers/proxy-number.repository';
import { ProviderRegistry } from './provider-registry';

export interface NumberImportResult {
  provider: string;
  /** Numbers put into the pool by this run. */
  added: string[];
  /** Numbers the pool held already. */
  alreadyThere: string[];
  /** Numbers whose webhooks this run pointed at the broker. */
  updated: string[];
  /** Numbers this run could not add or update, with why. */
  failed: Array<{ number: string; reason: string }>;
  /** False when the run changed nothing, neither in the pool nor at the vendor. */
  changed: boolean;
}

@Injectable()
export class NumberImport {
  constructor(
    private readonly numbers: ProxyNumberRepository,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly registry: ProviderRegistry,
  ) {}

  async run(provider: string): Promise<NumberImportResult> {
    if (!this.registry.has(provider)) throw unknownProvider(provider);
    if (!this.registry.managesNumbers(provider))
      throw new ProblemException({
        status: 422,
        slug: 'import-unsupported',
        title: 'Import not supported',
        detail: `Provider "${provider}" cannot list its numbers; add them with POST /v1/admin/numbers.`,
      });
    if (!this.config.publicUrl)
      throw new ProblemException({
        status: 422,
        slug: 'public-url-missing',
        title: 'PUBLIC_URL not set',
        detail: 'Numbers are pointed at PUBLIC_URL; set it and restart.',
      });
    const wanted = providerWebhookUrls(this.config.publicUrl, provider);

    const listed = await this.registry.call(provider, 'numbers', false, (p) => p.numbers!.listNumbers());
    if (!listed.ok)
      throw new ProblemException({
        status: 502,
        slug: 'provider-error',
        title: 'Provider refused the number list',
        detail: listed.failure.reason,
        extensions: { provider },
      });

    const result: NumberImportResult = { provider, added: [], alreadyThere: [], updated: [], failed: [], changed: false };
    for (const number of listed.value) {
      if (!isE164(number.number)) {
        result.failed.push({ number: number.number, reason: 'not an E.164 number' });
        continue;
      }
      const added = await this.numbers.addMissing(provider, [number.number]);
      (added > 0 ? result.added : result.alreadyThere).push(number.number);
      if (pointsAt(number, wanted)) continue;
      const pointed = await this.registry.call(provider, 'numbers', false, (p) => p.numbers!.pointNumber(number, wanted));
      if (pointed.ok) result.updated.push(number.number);
      else result.failed.push({ number: number.number, reason: pointed.failure.reason });
    }
    result.changed = result.added.length > 0 || result.updated.length > 0;
    return result;
  }
}

function pointsAt(number: ProviderNumber, wanted: NumberWebhooks): boolean {
  return number.smsUrl === wanted.smsUrl && number.voiceUrl === wanted.voiceUrl && number.statusCallback === wanted.statusCallback;
}
