import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemException } from '../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { checkPhoneNumber } from '../destinations/phone-number-check';
import type { ProxyNumberDto } from './dto/proxy-number.dto';
import type { Channel } from './proxy-number.entity';

interface NumberRow {
  id: string;
  provider: string;
  number: string;
  capabilities: Channel[];
  enabled: boolean;
  active_sessions: number;
  created_at: Date;
}

/** Seeded numbers: primary gets +2349010000001…, the second provider +2349020000001…, and so on. */
export function seededNumbers(providerIndex: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `+23490${providerIndex + 1}${String(i + 1).padStart(7, '0')}`);
}

/** The proxy-number pool: what each provider holds, and how loaded each number is. */
@Injectable()
export class ProxyNumbersService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ProxyNumbersService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
  ) {}

  /** Simulated providers come with a pool, so a new user can create sessions at once. */
  async onApplicationBootstrap(): Promise<void> {
    const count = this.config.sessions.simSeedNumbers;
    if (count === 0) return;
    let added = 0;
    for (const [index, provider] of this.config.providers.entries()) {
      if (provider.adapter !== 'sim') continue;
      const numbers = seededNumbers(index, count);
      const result: unknown[] = await this.dataSource.query(
        `INSERT INTO proxy_numbers (provider, number) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING RETURNING id`,
        [provider.name, numbers],
      );
      added += result.length;
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
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `INSERT INTO proxy_numbers (provider, number, capabilities, enabled) VALUES ($1, $2, $3, true)
       ON CONFLICT (provider, number) DO UPDATE SET enabled = true, capabilities = EXCLUDED.capabilities
       RETURNING id`,
      [provider, number, capabilities],
    );
    return (await this.find(rows[0].id))!;
  }

  async list(provider?: string): Promise<ProxyNumberDto[]> {
    const rows: NumberRow[] = await this.dataSource.query(
      `${SELECT_WITH_LOAD} ${provider ? 'WHERE pn.provider = $1' : ''} ORDER BY pn.provider, pn.number`,
      provider ? [provider] : [],
    );
    return rows.map(toDto);
  }

  async find(id: string): Promise<ProxyNumberDto | undefined> {
    const rows: NumberRow[] = await this.dataSource.query(`${SELECT_WITH_LOAD} WHERE pn.id = $1`, [id]);
    return rows[0] ? toDto(rows[0]) : undefined;
  }

  /** Stops lending the number to new sessions; the sessions it carries keep it until they end. */
  async disable(id: string): Promise<ProxyNumberDto | undefined> {
    await this.dataSource.query('UPDATE proxy_numbers SET enabled = false WHERE id = $1', [id]);
    return this.find(id);
  }
}

const SELECT_WITH_LOAD = `
  SELECT pn.id, pn.provider, pn.number, pn.capabilities, pn.enabled, pn.created_at,
    (SELECT count(*)::int FROM sessions s WHERE s.proxy_number_id = pn.id AND s.status = 'active' AND s.expires_at > now()) AS active_sessions
  FROM proxy_numbers pn`;

function toDto(row: NumberRow): ProxyNumberDto {
  return {
    id: row.id,
    provider: row.provider,
    number: row.number,
    capabilities: row.capabilities,
    enabled: row.enabled,
    activeSessions: row.active_sessions,
    createdAt: row.created_at.toISOString(),
  };
}
