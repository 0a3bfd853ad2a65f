import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ProblemException } from '../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { checkPhoneNumber } from '../destinations/phone-number-check';
import type { ProxyNumberDto } from './dto/proxy-number.dto';
import type { Channel } from './proxy-number.entity';
import { ProxyNumberRepository, type ProxyNumberRow } from './proxy-number.repository';

/** Seeded numbers: primary gets +2349010000001…, the second provider +2349020000001…, and so on. */
function seededNumbers(providerIndex: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `+23490${providerIndex + 1}${String(i + 1).padStart(7, '0')}`);
}

/** The proxy-number pool: what each provider holds, and how loaded each number is. */
@Injectable()
export class ProxyNumbersService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ProxyNumbersService.name);

  constructor(
    private readonly numbers: ProxyNumberRepository,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
  ) {}

  /** Simulated providers come with a pool, so a new user can create sessions at once. */
  async onApplicationBootstrap(): Promise<void> {
    const count = this.config.sessions.simSeedNumbers;
    if (count === 0) return;
    let added = 0;
    for (const [index, provider] of this.config.providers.entries()) {
      if (provider.adapter !== 'sim') continue;
      added += await this.numbers.addMissing(provider.name, seededNumbers(index, count));
    }
    if (added > 0) this.logger.log(`seeded ${added} proxy numbers on the simulated providers`);
  }

  async add(provider: string, number: string, capabilities: Channel[] = ['sms', 'voice']): Promise<ProxyNumberDto> {
    if (!this.config.providers.some((p) => p.name === provider)) {
      throw new ProblemException({
        status: 400,
        slug: 'validation-error',
        title: 'Invalid request',
        detail: `provider: no provider named "${provider}"`,
        extensions: {
          errors: [{ field: 'provider', message: `must be one of ${this.config.providers.map((p) => p.name).join(', ')}` }],
        },
      });
    }
    // A pool number is a real number of its country; one that carries SMS must be able to receive it.
    const verdict = checkPhoneNumber(number, capabilities.includes('sms') ? 'sms' : 'voice');
    if (!verdict.ok)
      throw new ProblemException({
        status: 422,
        slug: 'invalid-pool-number',
        title: 'Invalid pool number',
        detail: `number: ${verdict.message}`,
        extensions: {
          errors: [{ field: 'number', message: verdict.message }],
          ...(verdict.country ? { country: verdict.country } : {}),
        },
      });
    return (await this.find(await this.numbers.upsert(provider, number, capabilities)))!;
  }

  async list(provider?: string): Promise<ProxyNumberDto[]> {
    return (await this.numbers.list(provider)).map(toDto);
  }

  async find(id: string): Promise<ProxyNumberDto | undefined> {
    const row = await this.numbers.find(id);
    return row ? toDto(row) : undefined;
  }

  /** Stops lending the number to new sessions; the sessions it carries keep it until they end. */
  async disable(id: string): Promise<ProxyNumberDto | undefined> {
    await this.numbers.disable(id);
    return this.find(id);
  }

  /**
   * Dedicates the number to one account (null: returns it to the shared pool). From then on only
   * that account's sessions get it; sessions it carries for other accounts keep it until they end.
   */
  async dedicate(id: string, accountId: string | null): Promise<ProxyNumberDto | undefined> {
    if (!(await this.numbers.setAccount(id, accountId)))
      throw new ProblemException({
        status: 422,
        title: 'Invalid request',
        detail: `accountId: no account ${accountId}`,
        slug: 'account-not-found',
        extensions: {
          errors: [{ field: 'accountId', message: 'no account with this id' }],
        },
      });
    return this.find(id);
  }
}

function toDto(row: ProxyNumberRow): ProxyNumberDto {
  return { ...row, createdAt: row.createdAt.toISOString() };
}
