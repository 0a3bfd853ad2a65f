import { Body, Controller, Delete, Get, Put, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../accounts';
import { RescueSettingsDto, SetRescueDto } from './dto/rescue-settings.dto';
import { RescueSettingsRepository } from './rescue-settings.repository';

/** An account's opt-in to session rescue (docs/design.md#session-rescue); off by default: sessions stay on their provider. */
@ApiTags('account')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1/account/rescue')
export class RescueController {
  constructor(private readonly settings: RescueSettingsRepository) {}

  @Get()
  @ApiOperation({ summary: 'Whether your sessions are moved off a provider that stays down, after how long, and the text sent then.' })
  @ApiOkResponse({ type: RescueSettingsDto })
  async get(@CurrentPrincipal() principal: Principal): Promise<RescueSettingsDto> {
    return RescueSettingsDto.from(await this.settings.get(principal.accountId));
  }

  @Put()
  @ApiOperation({
    summary:
      'Turn session rescue on: once a provider has been OPEN for afterSeconds, your active sessions on it move to a new proxy number on a provider that admits them (`session.rebound`), each participant texted the notice from it.',
  })
  @ApiOkResponse({ type: RescueSettingsDto })
  async set(@CurrentPrincipal() principal: Principal, @Body() body: SetRescueDto): Promise<RescueSettingsDto> {
    return RescueSettingsDto.from(
      await this.settings.set(principal.accountId, { afterSeconds: body.afterSeconds, notice: body.notice ?? null }),
    );
  }

  @Delete()
  @ApiOperation({
    summary: 'Turn session rescue off: sessions stay on their provider until they end (the default). Moves not made yet are not made.',
  })
  @ApiOkResponse({ type: RescueSettingsDto })
  async clear(@CurrentPrincipal() principal: Principal): Promise<RescueSettingsDto> {
    return RescueSettingsDto.from(await this.settings.set(principal.accountId, { afterSeconds: null, notice: null }));
  }
}
