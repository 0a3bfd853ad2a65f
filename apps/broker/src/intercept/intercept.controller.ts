import { Body, Controller, Get, Put, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../accounts';
import { CallbackUrlValidator } from '../notifications';
import { InterceptUrlDto, SetInterceptUrlDto } from './dto/intercept-url.dto';
import { InterceptUrlRepository } from './intercept-url.repository';

@ApiTags('intercept')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1/account/intercept-url')
export class InterceptController {
  constructor(
    private readonly urls: InterceptUrlRepository,
    private readonly validator: CallbackUrlValidator,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Where the broker asks before relaying a text or bridging a call of a session that names no interceptUrl.' })
  @ApiOkResponse({ type: InterceptUrlDto })
  async get(@CurrentPrincipal() principal: Principal): Promise<InterceptUrlDto> {
    return { interceptUrl: await this.urls.get(principal.accountId) };
  }

  @Put()
  @ApiOperation({
    summary:
      'Set (or clear, with null) the account’s intercept URL: a signed `interaction.intercept` request before each relay and bridge; 2xx allows, 403 blocks.',
  })
  @ApiOkResponse({ type: InterceptUrlDto })
  async set(@CurrentPrincipal() principal: Principal, @Body() body: SetInterceptUrlDto): Promise<InterceptUrlDto> {
    if (body.interceptUrl !== null) this.validator.assertAcceptable(body.interceptUrl, 'interceptUrl');
    await this.urls.set(principal.accountId, body.interceptUrl);
    return { interceptUrl: body.interceptUrl };
  }
}
