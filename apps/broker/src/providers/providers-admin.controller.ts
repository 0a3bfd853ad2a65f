import { Body, Controller, Get, HttpCode, Inject, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminTokenGuard } from '../accounts';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { unknownProvider } from '../common/problem';
import { CpaasHealthDto, DisableProviderDto, NumberImportDto, ProviderHealthDto } from './dto/cpaas-health.dto';
import { BreakerStateStore } from './breaker-state.store';
import { BreakerLeadership } from './cluster/breaker-leadership';
import { NumberImport } from './number-import';
import { PoolUsage } from './pool-usage';
import { ProviderBreakers } from './provider-breakers';

@ApiTags('admin')
@ApiBearerAuth('admin-token')
@UseGuards(AdminTokenGuard)
@Controller('v1/admin/providers')
export class ProvidersAdminController {
  /** When this replica started serving, as GET /v1/health/cpaas says it. */
  private readonly startedAt: string;

  constructor(
    private readonly breakers: ProviderBreakers,
    private readonly store: BreakerStateStore,
    private readonly leadership: BreakerLeadership,
    private readonly pool: PoolUsage,
    private readonly numberImport: NumberImport,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.startedAt = new Date(clock.now()).toISOString();
  }

  @Post(':name/numbers/import')
  @HttpCode(200)
  @ApiOperation({
    summary: "Import the vendor account's numbers into the pool and point their webhooks at PUBLIC_URL (idempotent).",
  })
  @ApiOkResponse({ type: NumberImportDto })
  importNumbers(@Param('name') name: string): Promise<NumberImportDto> {
    return this.numberImport.run(name);
  }

  @Get()
  @ApiOperation({ summary: 'Providers in routing order, with breaker state and the disabled flag.' })
  @ApiOkResponse({ type: CpaasHealthDto })
  list(): CpaasHealthDto {
    return {
      providers: this.breakers.healthAll().map((p) => ProviderHealthDto.from(p, this.pool.of(p.name), this.leadership.current)),
      replica: this.leadership.replica,
      leader: this.leadership.current.leader,
      startedAt: this.startedAt,
      timestamp: new Date(this.clock.now()).toISOString(),
    };
  }

  @Post(':name/disable')
  @HttpCode(200)
  @ApiOperation({ summary: 'Take a provider out of routing by hand (its breaker keeps running).' })
  @ApiOkResponse({ type: ProviderHealthDto })
  async disable(@Param('name') name: string, @Body() body: DisableProviderDto): Promise<ProviderHealthDto> {
    this.known(name);
    return this.setDisabled(name, true, body.reason ?? null);
  }

  @Post(':name/enable')
  @HttpCode(200)
  @ApiOperation({ summary: 'Put a disabled provider back into routing.' })
  @ApiOkResponse({ type: ProviderHealthDto })
  async enable(@Param('name') name: string): Promise<ProviderHealthDto> {
    this.known(name);
    return this.setDisabled(name, false, null);
  }

  /** Persisted (and announced to the other replicas) first, then applied here. */
  private async setDisabled(name: string, disabled: boolean, reason: string | null): Promise<ProviderHealthDto> {
    await this.store.saveDisabled(name, disabled, reason);
    this.breakers.setDisabled(name, disabled, reason);
    return ProviderHealthDto.from(this.breakers.health(name), this.pool.of(name), this.leadership.current);
  }

  private known(name: string): void {
    if (!this.breakers.has(name)) throw unknownProvider(name);
  }
}
