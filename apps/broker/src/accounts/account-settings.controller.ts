import { Body, Controller, Get, Put, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { DestinationCache } from '../destinations/destination-cache';
import { ProblemException } from '../common/problem';
import { AccountsService, type Principal } from './accounts.service';
import { ApiKeyGuard, CurrentPrincipal } from './auth.guards';
import { CurrentAccountDto } from './dto/current-account.dto';
import { DefaultCountryDto, SetDefaultCountryDto } from './dto/default-country.dto';

/** An account's own settings, under its API key. */
@ApiTags('account')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1/account')
export class AccountSettingsController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly destinations: DestinationCache,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The account this API key acts for: its id, name and Twilio-style sid (the compat API’s user name).' })
  @ApiOkResponse({ type: CurrentAccountDto })
  async account(@CurrentPrincipal() principal: Principal): Promise<CurrentAccountDto> {
    const account = await this.accounts.find(principal.accountId);
    // A key outlives nothing: its account going means the key went with it (ON DELETE CASCADE).
    if (!account)
      throw new ProblemException({
        status: 404,
        slug: 'account-not-found',
        title: 'Account not found',
        detail: 'This key’s account no longer exists.',
      });
    return CurrentAccountDto.from(account);
  }

  @Get('default-country')
  @ApiOperation({ summary: 'The country whose national numbers participants may be written in; null: E.164 only.' })
  @ApiOkResponse({ type: DefaultCountryDto })
  async defaultCountry(@CurrentPrincipal() principal: Principal): Promise<DefaultCountryDto> {
    return { country: await this.accounts.defaultCountry(principal.accountId) };
  }

  @Put('default-country')
  @ApiOperation({ summary: 'Set (or clear, with null) the default country, e.g. NG: then 08031234567 is read as +2348031234567.' })
  @ApiOkResponse({ type: DefaultCountryDto })
  async setDefaultCountry(@CurrentPrincipal() principal: Principal, @Body() body: SetDefaultCountryDto): Promise<DefaultCountryDto> {
    const country = await this.accounts.setDefaultCountry(principal.accountId, body.country);
    // This replica reads participants with it from its next create on; the others within a NOTIFY.
    await this.destinations.reread(principal.accountId);
    return { country };
  }
}
