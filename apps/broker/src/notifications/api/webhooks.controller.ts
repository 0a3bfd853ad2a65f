import { Body, Controller, Get, HttpCode, Inject, Param, Post, Put, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../../accounts';
import { secretAlreadyShown, WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import { DefaultCallbackUrls } from '../targets/default-callback-urls';
import {
  CallbackUrlDto,
  RevealedWebhookSecretDto,
  RotatedWebhookSecretDto,
  SetCallbackUrlDto,
  WebhookSecretStatusDto,
} from './dto/account-webhooks.dto';
import { DeliveryDto } from './dto/delivery.dto';
import { EventListDto, ListEventsQueryDto } from './dto/events.dto';
import { WebhookHistory } from './webhook-history';

@ApiTags('webhooks')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1')
export class WebhooksController {
  constructor(
    private readonly history: WebhookHistory,
    private readonly callbackUrls: DefaultCallbackUrls,
    @Inject(WebhookSecrets) private readonly secrets: WebhookSecrets,
  ) {}

  @Get('events')
  @ApiOperation({ summary: 'Your events (optionally one session’s), newest first, with where each was delivered.' })
  @ApiOkResponse({ type: EventListDto })
  events(@CurrentPrincipal() principal: Principal, @Query() query: ListEventsQueryDto): Promise<EventListDto> {
    return this.history.listEvents(principal.accountId, query);
  }

  @Get('deliveries/:id')
  @ApiOperation({ summary: 'A webhook delivery and each of its attempts: status, latency, error.' })
  @ApiOkResponse({ type: DeliveryDto })
  delivery(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<DeliveryDto> {
    return this.history.getDelivery(principal.accountId, id);
  }

  @Get('account/callback-url')
  @ApiOperation({ summary: 'Where session events go when a session has no callbackUrl of its own.' })
  @ApiOkResponse({ type: CallbackUrlDto })
  callbackUrl(@CurrentPrincipal() principal: Principal): Promise<CallbackUrlDto> {
    return this.callbackUrls.get(principal.accountId);
  }

  @Put('account/callback-url')
  @ApiOperation({
    summary: 'Set (or clear, with null) the default callback URL. Public http(s) addresses only, at most 2,048 characters.',
  })
  @ApiOkResponse({ type: CallbackUrlDto })
  setCallbackUrl(@CurrentPrincipal() principal: Principal, @Body() body: SetCallbackUrlDto): Promise<CallbackUrlDto> {
    return this.callbackUrls.set(principal.accountId, body.callbackUrl);
  }

  @Post('account/webhook-secret/reveal')
  @HttpCode(200)
  @ApiOperation({
    summary: 'The current signing secret, if it was never shown: shown this once. 409 once it was (rotate for a new one).',
  })
  @ApiOkResponse({ type: RevealedWebhookSecretDto })
  async revealSecret(@CurrentPrincipal() principal: Principal): Promise<RevealedWebhookSecretDto> {
    const revealed = await this.secrets.reveal(principal.accountId);
    if (!revealed) throw secretAlreadyShown();
    return revealed;
  }

  @Get('account/webhook-secret')
  @ApiOperation({ summary: 'Whether a signing secret exists and since when; the secret itself is never shown again.' })
  @ApiOkResponse({ type: WebhookSecretStatusDto })
  secretStatus(@CurrentPrincipal() principal: Principal): Promise<WebhookSecretStatusDto> {
    return this.secrets.status(principal.accountId);
  }

  @Post('account/webhook-secret/rotate')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new signing secret, shown this once. The previous one keeps signing for 24 h.' })
  @ApiOkResponse({ type: RotatedWebhookSecretDto })
  rotateSecret(@CurrentPrincipal() principal: Principal): Promise<RotatedWebhookSecretDto> {
    return this.secrets.rotate(principal.accountId);
  }
}
