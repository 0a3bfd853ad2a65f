import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminTokenGuard } from '../accounts';
import { unknownProvider } from '../common/problem';
import { CpaasHealthDto, DisableProviderDto, NumberImportDto, ProviderHealthDto } from './dto/cpaas-health.dto';
import { NumberImport } from './number-import';
import { PoolUsage } from './pool-usage';
import { ProviderRegistry } from './provider-registry';

@ApiTags('admin')
@ApiBearerAuth('admin-token')
@UseGuards(AdminTokenGuard)
@Controller('v1/admin/providers')
export class ProvidersAdminController {
  constructor(
    private readonly registry: ProviderRegistry,
    private readonly pool: PoolUsage,
    private readonly numberImport: NumberImport,
  ) {}

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
      providers: this.registry.healthAll().map((p) => ProviderHealthDto.from(p, this.pool.of(p.name))),
      timestamp: new Date().toISOString(),
    };
  }

  @Post(':name/disable')
  @HttpCode(200)
  @ApiOperation({ summary: 'Take a provider out of routing by hand (its breaker keeps running).' })
  @ApiOkResponse({ type: ProviderHealthDto })
  async disable(@Param('name') name: string, @Body() body: DisableProviderDto): Promise<ProviderHealthDto> {
    this.known(name);
    await this.registry.setDisabled(name, true, body.reason ?? null);
    return ProviderHealthDto.from(this.registry.health(name), this.pool.of(name));
  }

  @Post(':name/enable')
  @HttpCode(200)
  @ApiOperation({ summary: 'Put a disabled provider back into routing.' })
  @ApiOkResponse({ type: ProviderHealthDto })
  async enable(@Param('name') name: string): Promise<ProviderHealthDto> {
    this.known(name);
    await this.registry.setDisabled(name, false, null);
    return ProviderHealthDto.from(this.registry.health(name), this.pool.of(name));
  }

  private known(name: string): void {
    if (!this.registry.has(name)) throw unknownProvider(name);
  }
}
