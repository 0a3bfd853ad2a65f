import { Body, Controller, Delete, Get, Param, ParseUUIDPipe, Post, Put, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ProblemException } from '../common/problem';
import { DestinationCache } from '../destinations/destination-cache';
import type { Account } from './account.entity';
import { AccountsService } from './accounts.service';
import type { ApiKey } from './api-key.entity';
import { AdminTokenGuard } from './auth.guards';
import {
  AccountDestinationsDto,
  AccountDto,
  AccountListDto,
  ApiKeyDto,
  CreateAccountDto,
  CreateApiKeyDto,
  CreatedAccountDto,
  CreatedApiKeyDto,
} from './dto/accounts-admin.dto';

const notFound = (what: string) => () =>
  new ProblemException({ status: 404, slug: 'not-found', title: 'Not found', detail: `No ${what} with this id.` });

@ApiTags('admin')
@ApiBearerAuth('admin-token')
@UseGuards(AdminTokenGuard)
@Controller('v1/admin')
export class AccountsAdminController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly destinations: DestinationCache,
  ) {}

  @Get('accounts')
  @ApiOperation({ summary: 'Accounts and their API keys (prefixes only).' })
  @ApiOkResponse({ type: AccountListDto })
  async list(): Promise<AccountListDto> {
    return { accounts: (await this.accounts.list()).map(({ account, keys }) => toAccountDto(account, keys)) };
  }

  @Post('accounts')
  @ApiOperation({ summary: 'Create an account with its first API key and webhook secret (both shown once).' })
  @ApiCreatedResponse({ type: CreatedAccountDto })
  async create(@Body() body: CreateAccountDto): Promise<CreatedAccountDto> {
    const { account, key, apiKey, webhookSecret } = await this.accounts.createAccount(body.name, body.label);
    return { account: toAccountDto(account, [apiKey]), apiKey: { ...toKeyDto(apiKey), key }, webhookSecret };
  }

  @Post('accounts/:id/api-keys')
  @ApiOperation({ summary: 'Add an API key to an account (the key is shown once).' })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  async createKey(
    @Param('id', new ParseUUIDPipe({ exceptionFactory: notFound('account') })) id: string,
    @Body() body: CreateApiKeyDto,
  ): Promise<CreatedApiKeyDto> {
    const created = await this.accounts.createKey(id, body.label);
    if (!created) throw notFound('account')();
    return { ...toKeyDto(created.apiKey), key: created.key };
  }

  @Put('accounts/:id/destinations')
  @ApiOperation({ summary: 'Set the countries an account may connect participants in, and whether special-rate numbers are allowed.' })
  @ApiOkResponse({ type: AccountDto })
  async setDestinations(
    @Param('id', new ParseUUIDPipe({ exceptionFactory: notFound('account') })) id: string,
    @Body() body: AccountDestinationsDto,
  ): Promise<AccountDto> {
    const updated = await this.accounts.setDestinations(id, body.allowedCountries, body.allowSpecialRate);
    if (!updated) throw notFound('account')();
    // This replica's toll-fraud memory holds the change before the answer: a narrowing is honoured here
    // from the 200 on, not only when its notification arrives (other replicas: within one notification).
    await this.destinations.reread(id);
    return toAccountDto(updated.account, updated.keys);
  }

  @Delete('api-keys/:id')
  @ApiOperation({ summary: 'Revoke an API key; requests with it are refused within seconds.' })
  @ApiOkResponse({ type: ApiKeyDto })
  async revoke(@Param('id', new ParseUUIDPipe({ exceptionFactory: notFound('API key') })) id: string): Promise<ApiKeyDto> {
    const apiKey = await this.accounts.revokeKey(id);
    if (!apiKey) throw notFound('API key')();
    return toKeyDto(apiKey);
  }
}

function toKeyDto(key: ApiKey): ApiKeyDto {
  return {
    id: key.id,
    accountId: key.accountId,
    prefix: key.keyPrefix,
    label: key.label,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt ? key.revokedAt.toISOString() : null,
  };
}

function toAccountDto(account: Account, keys: ApiKey[]): AccountDto {
  return {
    id: account.id,
    name: account.name,
    createdAt: account.createdAt.toISOString(),
    apiKeys: keys.map(toKeyDto),
    allowedCountries: account.allowedCountries,
    allowSpecialRate: account.allowSpecialRate,
  };
}
