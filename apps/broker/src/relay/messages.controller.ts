import { Body, Controller, Headers, HttpCode, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../accounts';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { InteractionDto } from './dto/interaction.dto';
import { SendMessageDto } from './dto/send-message.dto';
import { MessagesService } from './messages.service';
import { sessionIdPipe as sessionId } from '../sessions/session-id.pipe';

@ApiTags('sessions')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly idempotency: IdempotencyService,
  ) {}

  @Post(':id/messages')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a text from the proxy number to one participant; durable and retried like a relay (message.relayed / message.failed).',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Same key and body within 24 h replays the first answer.' })
  @ApiAcceptedResponse({ type: InteractionDto })
  send(
    @CurrentPrincipal() principal: Principal,
    @Param('id', sessionId) id: string,
    @Body() body: SendMessageDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<InteractionDto> {
    if (key === undefined) return this.messages.send(principal.accountId, id, body);
    return this.idempotency.run(
      principal.accountId,
      key,
      // The key is bound to the session as well as the body: the same text into another session is another request.
      { message: { sessionId: id, to: body.to, text: body.text } },
      response,
      () => this.messages.send(principal.accountId, id, body, key),
      () => this.messages.sentWith(principal.accountId, id, key),
      202,
    );
  }
}
